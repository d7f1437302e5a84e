import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type ApiKeyRecord,
  countActiveKeys,
  findApiKeyById,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../auth/api-keys.js';
import { pageContext, requireUser } from './guard.js';
import { MAX_KEY_NAME_LENGTH, keyNameProblem, normaliseKeyName } from '../../auth/key-format.js';
import { monthlySearches } from '../../limits/usage.js';
import { sendPage } from '../views.js';

/**
 * `/settings/keys`: the signed-in user's API keys. Create one (the full key
 * is shown once, in the response to the form), or revoke one. At most
 * MAX_ACTIVE_KEYS active keys per user through this page.
 */

export const MAX_ACTIVE_KEYS = 20;

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

interface KeyRow {
  id: number;
  name: string;
  prefix: string;
  created: string;
  lastUsed: string;
  active: boolean;
}

function formatTime(date: Date | null): string {
  return date ? date.toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : 'never';
}

function toRow(key: ApiKeyRecord): KeyRow {
  return {
    id: key.id,
    name: key.name,
    prefix: key.displayPrefix,
    created: formatTime(key.createdAt),
    lastUsed: formatTime(key.lastUsedAt),
    active: key.revokedAt === null,
  };
}

async function renderKeys(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  extra: { status?: number; error?: string; newKey?: { key: string; name: string }; name?: string } = {},
): Promise<FastifyReply> {
  const user = request.user!;
  const keys = (await listApiKeys(app.pool, { userId: user.id })).map(toRow);
  const notice = request.session.get('notice');
  if (notice) request.session.set('notice', undefined);
  return sendPage(
    reply,
    'keys',
    {
      title: 'API keys',
      ...pageContext(request, reply),
      active: 'keys',
      keys,
      activeCount: keys.filter((k) => k.active).length,
      maxActive: MAX_ACTIVE_KEYS,
      maxNameLength: MAX_KEY_NAME_LENGTH,
      notice: notice ?? '',
      error: extra.error ?? '',
      newKey: extra.newKey ?? null,
      name: extra.name ?? '',
      // "Searches this month" (hidden when the count cannot be read).
      monthlySearches: await searchesThisMonth(app, user.id),
    },
    extra.status ?? 200,
  );
}

/** The user's searches this month (counted as they are admitted), null when unreadable. */
async function searchesThisMonth(app: FastifyInstance, userId: number): Promise<number | null> {
  return monthlySearches(app.pool, userId).catch(() => null);
}

export async function keysRoutes(app: FastifyInstance): Promise<void> {
  const page = async (request: FastifyRequest, reply: FastifyReply) => renderKeys(app, request, reply);
  app.get('/settings/keys', { preHandler: requireUser }, page);
  app.get('/settings/keys/', { preHandler: requireUser }, page);

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const user = request.user!;
    const raw = (request.body as { name?: unknown } | undefined)?.name;
    const name = typeof raw === 'string' ? raw.trim() : '';
    const problem = keyNameProblem(name);
    if (problem) {
      return renderKeys(app, request, reply, {
        status: 400,
        error: problem,
        // shown back in the form without what made it unacceptable
        name: name.replace(CONTROL_CHARACTERS, '').slice(0, MAX_KEY_NAME_LENGTH),
      });
    }
    if ((await countActiveKeys(app.pool, user.id)) >= MAX_ACTIVE_KEYS) {
      return renderKeys(app, request, reply, {
        status: 400,
        error: `You already have ${MAX_ACTIVE_KEYS} active keys. Revoke one before creating another.`,
        name,
      });
    }
    const issued = await issueApiKey(app.pool, user.id, name);
    return renderKeys(app, request, reply, { newKey: { key: issued.key, name: normaliseKeyName(name) } });
  };
  app.post('/settings/keys', { preHandler: [requireUser, app.csrfProtection] }, create);
  app.post('/settings/keys/', { preHandler: [requireUser, app.csrfProtection] }, create);

  app.post<{ Params: { id: string } }>(
    '/settings/keys/:id/revoke',
    { preHandler: [requireUser, app.csrfProtection] },
    async (request, reply) => {
      const user = request.user!;
      const id = /^\d{1,15}$/.test(request.params.id) ? Number(request.params.id) : null;
      const key = id === null ? null : await findApiKeyById(app.pool, id);
      if (!key || key.userId !== user.id) {
        request.session.set('notice', 'That key does not exist.');
      } else if (await revokeApiKey(app.pool, key.id, user.id)) {
        app.apiKeys.forget(key.prefix);
        request.session.set('notice', `Revoked key ${key.displayPrefix} ("${key.name}").`);
      } else {
        request.session.set('notice', `Key ${key.displayPrefix} was already revoked.`);
      }
      return reply.redirect('/settings/keys', 303);
    },
  );
}
