import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/index.js';
import { DatabaseUnavailable, healthOf, isoOrNull } from '../upstream/health-store.js';
import type { ProviderDescriptor, ProviderDirectory } from '../providers/types.js';

/*
 * Health endpoints for uptime monitors (spec 4.3, 5.2):
 *   /status/health, /status/health/            roll-up of the watched providers
 *   /status/health/<provider>[/]                one provider
 * Every reply is JSON with Cache-Control: no-store, errors included. Upstream
 * error text never appears here. Checks in order: method (405), monitor
 * switch (404), token (403), then the endpoint's own.
 */

type Body = Record<string, unknown>;

function sendJson(reply: FastifyReply, status: number, body: Body): FastifyReply {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .header('Content-Type', 'application/json; charset=utf-8')
    .send(JSON.stringify(body));
}

function firstString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : '';
  return '';
}

/** The token a monitor sent: `?token=`, `X-Monitor-Token`, or `Authorization: Bearer` in any case (first non-empty wins). */
export function suppliedToken(request: FastifyRequest): string {
  const fromQuery = firstString((request.query as Record<string, unknown> | undefined)?.token);
  if (fromQuery) return fromQuery;
  const fromHeader = firstString(request.headers['x-monitor-token']);
  if (fromHeader) return fromHeader;
  const auth = firstString(request.headers.authorization);
  const bearer = /^\s*bearer\s+(\S.*)$/is.exec(auth);
  return bearer ? bearer[1]!.trim() : '';
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison on the UTF-8 bytes (through SHA-256, so lengths leak nothing). */
export function tokenMatches(supplied: string, expected: string): boolean {
  if (!supplied) return false;
  return timingSafeEqual(digest(supplied), digest(expected));
}

/** The roll-up's providers: configured ones whose slug or group is listed (all configured when the list is empty). */
export function monitorScope(config: Config, providers: ProviderDirectory): ProviderDescriptor[] {
  const configured = providers.configured();
  const wanted = new Set(config.STATUS_MONITOR_PROVIDERS);
  if (wanted.size === 0) return configured;
  return configured.filter((p) => wanted.has(p.slug) || wanted.has(p.group));
}

const ALLOWED = new Set(['GET', 'HEAD']);

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { config, providers } = app;

  /** The checks every health endpoint makes first; answers and returns false when one fails. */
  function admit(request: FastifyRequest, reply: FastifyReply): boolean {
    if (!ALLOWED.has(request.method)) {
      reply.header('Allow', 'GET, HEAD');
      sendJson(reply, 405, { status: 'error', detail: 'method not allowed' });
      return false;
    }
    if (!config.STATUS_MONITOR_ENABLED) {
      sendJson(reply, 404, { status: 'error', detail: 'not found' });
      return false;
    }
    if (config.STATUS_MONITOR_TOKEN && !tokenMatches(suppliedToken(request), config.STATUS_MONITOR_TOKEN)) {
      sendJson(reply, 403, { status: 'error', detail: 'invalid token' });
      return false;
    }
    return true;
  }

  type Rows = Awaited<ReturnType<typeof app.health.reader.rows>>;

  /** The status rows, or null after answering 500 `database unavailable` (with `extra` fields). */
  async function readRows(request: FastifyRequest, reply: FastifyReply, extra: object): Promise<Rows | null> {
    try {
      return await app.health.reader.rows();
    } catch (err) {
      request.log.warn({ err: err instanceof DatabaseUnavailable ? err.message : err }, 'health: database unavailable');
      sendJson(reply, 500, { status: 'error', ...extra, detail: 'database unavailable' });
      return null;
    }
  }

  async function rollUp(request: FastifyRequest, reply: FastifyReply) {
    if (!admit(request, reply)) return reply;
    const scope = monitorScope(config, providers);
    if (scope.length === 0) return sendJson(reply, 500, { status: 'error', detail: 'no providers watched' });
    const rows = await readRows(request, reply, {});
    if (!rows) return reply;
    const health = healthOf(scope, rows);
    const down = health.filter((h) => h.state === 'down').map((h) => h.slug);
    const operational = health.filter((h) => h.state === 'up').length;
    return sendJson(reply, down.length ? 500 : 200, {
      status: down.length ? 'down' : 'ok',
      watched: scope.length,
      operational,
      down,
      unknown: scope.length - operational - down.length,
    });
  }

  async function oneProvider(request: FastifyRequest<{ Params: { provider: string } }>, reply: FastifyReply) {
    if (!admit(request, reply)) return reply;
    const slug = request.params.provider;
    const info = providers.get(slug);
    if (!info) return sendJson(reply, 404, { status: 'error', provider: slug, detail: 'unknown provider' });
    if (!providers.isConfigured(info.slug)) {
      return sendJson(reply, 404, {
        status: 'error',
        provider: slug,
        detail: 'provider not configured on this instance',
      });
    }
    const rows = await readRows(request, reply, { provider: slug });
    if (!rows) return reply;
    const [h] = healthOf([info], rows);
    const down = h!.state === 'down';
    return sendJson(reply, down ? 500 : 200, {
      status: down ? 'down' : 'ok',
      provider: info.slug,
      state: h!.state,
      checked_at: isoOrNull(h!.checkedAt),
      last_ok_at: isoOrNull(h!.lastOkAt),
    });
  }

  async function notFound(request: FastifyRequest, reply: FastifyReply) {
    if (!admit(request, reply)) return reply;
    return sendJson(reply, 404, { status: 'error', detail: 'not found' });
  }

  app.all('/status/health', rollUp);
  app.all('/status/health/', rollUp);
  app.all('/status/health/:provider', oneProvider);
  app.all('/status/health/:provider/', oneProvider);
  app.all('/status/health/*', notFound);
}
