import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { countSearches } from '../../limits/count.js';
import { parseQuery, suggestQuerySchema } from '../../search/params.js';
import { suggest } from '../../search/suggest.js';

/** `GET /api/v1/suggest/`: autocomplete suggestions (spec 2.8). Counts as one search. */
export async function suggestRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const parsed = parseQuery(suggestQuerySchema, request.query);
    if (!parsed.ok) return reply.code(400).send(parsed.errors);
    countSearches(request, 1);
    return suggest({ config: app.config, upstream: app.upstream, cache: app.searchCache }, parsed.value.q);
  };
  app.get('/suggest/', handler);
  app.get('/suggest', handler);
}
