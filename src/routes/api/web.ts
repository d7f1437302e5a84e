import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitted, runAhead } from '../../limits/api-limits.js';
import { countSearches } from '../../limits/count.js';
import { parseQuery, webQuerySchema } from '../../search/params.js';
import { searchWeb } from '../../search/web.js';

/**
 * `GET /api/v1/web/`: up to four web engines at once, merged (spec 2.1, 4.1).
 * Usage: one search per engine in the requested scope, counted on success only.
 * The engines are asked while the rate limits are checked (limits/run-ahead.ts).
 */
export async function webRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const parsed = parseQuery(webQuerySchema, request.query);
    if (!parsed.ok) return (await admitted(request, reply)) ? reply.code(400).send(parsed.errors) : reply;
    const ran = await runAhead(request, reply, () =>
      searchWeb(
        { config: app.config, upstream: app.upstream, providers: app.providers, cache: app.searchCache },
        parsed.value,
      ),
    );
    if (!ran) return reply;
    const outcome = ran.value;
    if (outcome.status !== 200) return reply.code(outcome.status).send(outcome.body);
    countSearches(request, parsed.value.engine.length);
    return outcome.body;
  };
  const options = { config: { runsAhead: true } };
  app.get('/web/', options, handler);
  app.get('/web', options, handler);
}
