import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { countSearches } from '../../limits/count.js';
import { parseQuery, webQuerySchema } from '../../search/params.js';
import { searchWeb } from '../../search/web.js';

/**
 * `GET /api/v1/web/`: up to four web engines at once, merged (spec 2.1, 4.1).
 * Usage: one search per engine in the requested scope, counted on success only.
 */
export async function webRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const parsed = parseQuery(webQuerySchema, request.query);
    if (!parsed.ok) return reply.code(400).send(parsed.errors);
    const outcome = await searchWeb(
      { config: app.config, upstream: app.upstream, providers: app.providers, cache: app.searchCache },
      parsed.value,
    );
    if (outcome.status !== 200) return reply.code(outcome.status).send(outcome.body);
    countSearches(request, parsed.value.engine.length);
    return outcome.body;
  };
  app.get('/web/', handler);
  app.get('/web', handler);
}
