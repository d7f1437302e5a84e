import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type StatusRow, healthOf, isoOrNull } from '../../providers/health-store.js';
import { GROUPS, PROVIDER_SLUGS } from '../../providers/registry.js';
import { describeRoute } from './openapi.js';

export const STATUS_NOT_PUBLISHED = 'Provider status is not published on this instance.';

/** The body of GET /api/v1/status/ (spec 2.10). */
export const statusResponseSchema = z.object({
  providers: z.array(
    z.object({
      slug: z.enum(PROVIDER_SLUGS),
      name: z.string().meta({ description: 'Display name.' }),
      group: z.enum(GROUPS.map((g) => g.key)),
      monitor: z.enum(['query', 'probe']).meta({
        description: 'How the state is established: from real searches (`query`) or an active check (`probe`).',
      }),
      state: z.enum(['up', 'down', 'unknown']).meta({ description: '`unknown`: nothing observed yet.' }),
      checked_at: z.string().nullable().meta({ description: 'ISO 8601 UTC; null when never observed.' }),
      last_ok_at: z.string().nullable().meta({ description: 'ISO 8601 UTC of the last success, or null.' }),
      last_error: z.string().meta({ description: 'Upstream error text, may be empty.' }),
      source: z.string().meta({ description: 'Where the last observation came from: `query`, `probe`, or "".' }),
    }),
  ),
});

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
        };
      }),
    };
    return reply.header('Cache-Control', 'no-store').send(body);
  };
  describeRoute(app, {
    path: '/status/',
    methods: ['GET'],
    doc: {
      operationId: 'providerStatus',
      summary: 'Provider status',
      description: 'One record per configured provider, in registry order. Not counted as a search.',
      response: statusResponseSchema,
      headers: { 'Cache-Control': 'Always `no-store`.' },
      errors: { 404: STATUS_NOT_PUBLISHED },
    },
  });
  app.get('/status/', handler);
  app.get('/status', handler);
}
