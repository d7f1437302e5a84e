import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type StatusRow, healthOf, isoOrNull } from '../../upstream/health-store.js';
import type { LimitsView } from '../../upstream/pacing/limits-view.js';
import { type statusLimitsSchema, statusResponseSchema } from '../../search/response-schemas.js';
import { describedGet } from './openapi.js';

function limitsField(view: LimitsView | undefined): { limits?: z.output<typeof statusLimitsSchema> } {
  if (!view) return {};
  return {
    limits: {
      rate_per_second: view.ratePerSecond,
      concurrency: view.concurrency,
      budget: view.budget && {
        period: view.budget.period,
        limit: view.budget.limit,
        used: view.budget.used,
        resets_at: view.budget.resetsAt.toISOString(),
        per_user: view.budget.perUser,
      },
      upstream: view.upstream && {
        limit: view.upstream.limit,
        remaining: view.upstream.remaining,
        resets_at: isoOrNull(view.upstream.resetsAt),
        reported_at: view.upstream.reportedAt.toISOString(),
      },
      terms: view.terms,
    },
  };
}

export const STATUS_NOT_PUBLISHED = 'Provider status is not published on this instance.';

type StatusResponse = z.output<typeof statusResponseSchema>;

/**
 * `GET /api/v1/status/`: one record per configured provider, in registry
 * order (spec 2.10). Unlike the monitor endpoints it includes last_error.
 * A database that cannot be read degrades every provider to unknown.
 */
export async function apiStatusRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!app.config.STATUS_PAGE_ENABLED) return reply.code(404).send({ detail: STATUS_NOT_PUBLISHED });
    let rows = new Map<string, StatusRow>();
    try {
      rows = await app.health.reader.rows();
    } catch (err) {
      request.log.warn({ err }, 'provider status: database unavailable, reporting unknown');
    }
    let limits = new Map<string, LimitsView>();
    try {
      limits = await app.health.limits();
    } catch (err) {
      request.log.warn({ err }, 'provider limits: database unavailable, left out');
    }
    const configured = app.providers.configured();
    const health = healthOf(configured, rows);
    const body: StatusResponse = {
      providers: configured.map((p, i) => {
        const h = health[i]!;
        return {
          slug: p.slug,
          name: p.name,
          group: p.group,
          monitor: p.monitor,
          state: h.state,
          checked_at: isoOrNull(h.checkedAt),
          last_ok_at: isoOrNull(h.lastOkAt),
          last_error: h.lastError,
          source: h.source,
          ...limitsField(limits.get(p.slug)),
        };
      }),
    };
    return reply.header('Cache-Control', 'no-store').send(body);
  };
  describedGet(app, '/status/', handler, {
    operationId: 'providerStatus',
    summary: 'Provider status',
    description: 'One record per configured provider, in registry order. Not counted as a search.',
    response: statusResponseSchema,
    headers: { 'Cache-Control': 'Always `no-store`.' },
    errors: { 404: STATUS_NOT_PUBLISHED },
  });
}
