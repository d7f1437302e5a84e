import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageContext, requireUser } from './web/guard.js';
import { type HistoryBucket, type StatusRow, readHistory } from '../upstream/health-store.js';
import { buildStatusPage } from '../upstream/status-view.js';
import { sendPage } from './views.js';

/**
 * `/status`: the human status page, for signed-in users only (anonymous
 * visitors are sent to /login?next=/status). 404 when STATUS_PAGE_ENABLED is
 * false. A database that cannot be read shows every provider as unknown with
 * a notice, never an error page.
 */
export async function statusPage(app: FastifyInstance): Promise<void> {
  const published = async (_request: FastifyRequest, reply: FastifyReply) => {
    if (!app.config.STATUS_PAGE_ENABLED) {
      reply.callNotFound();
      return reply;
    }
  };

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    let rows = new Map<string, StatusRow>();
    let history: HistoryBucket[] = [];
    let databaseUnavailable = false;
    const since = new Date(Date.now() - 31 * 24 * 3_600_000);
    const [rowsResult, historyResult, limitsResult] = await Promise.allSettled([
      app.health.reader.rows(),
      readHistory(app.pool, since),
      app.health.limits(),
    ]);
    if (rowsResult.status === 'fulfilled') rows = rowsResult.value;
    else databaseUnavailable = true;
    if (historyResult.status === 'fulfilled') history = historyResult.value;
    else databaseUnavailable = true;
    if (databaseUnavailable) request.log.warn('status page: health data could not be read');

    const limits = limitsResult.status === 'fulfilled' ? limitsResult.value : new Map();
    const view = buildStatusPage({ providers: app.providers.configured(), rows, history, limits, databaseUnavailable });
    return sendPage(reply, 'status', {
      title: 'Provider status',
      ...pageContext(request, reply),
      active: 'status',
      view,
    });
  };

  for (const url of ['/status', '/status/']) {
    app.get(url, { preHandler: [published, requireUser] }, page);
  }
}
