import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitted, runAhead } from '../../limits/api-limits.js';
import { countSearches } from '../../limits/count.js';
import { parseQuery, suggestQuerySchema } from '../../search/params.js';
import { suggest } from '../../search/suggest.js';

/** `GET /api/v1/suggest/`: autocomplete suggestions (spec 2.8). Counts as one search. */
export async function suggestRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const parsed = parseQuery(suggestQuerySchema, request.query);
    if (!parsed.ok) return (await admitted(request, reply)) ? reply.code(400).send(parsed.errors) : reply;
    const ran = await runAhead(request, reply, () =>
      suggest({ config: app.config, upstream: app.upstream, cache: app.searchCache }, parsed.value.q),
    );
    if (!ran) return reply;
    countSearches(request, 1);
    return ran.value;
  };
  // The upstream is asked while the rate limits are checked (limits/run-ahead.ts).
  const options = { config: { runsAhead: true } };
  app.get('/suggest/', options, handler);
  app.get('/suggest', options, handler);
}
