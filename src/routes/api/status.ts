import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type StatusRow, healthOf, isoOrNull } from '../../providers/health-store.js';

export const STATUS_NOT_PUBLISHED = 'Provider status is not published on this instance.';

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
    return reply.header('Cache-Control', 'no-store').send({
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
    });
  };
  app.get('/status/', handler);
  app.get('/status', handler);
}
