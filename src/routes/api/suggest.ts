import type { FastifyInstance } from 'fastify';
import { suggestQuerySchema } from '../../search/queries.js';
import { suggest } from '../../search/suggest.js';
import { suggestResponseSchema } from '../../search/response-schemas.js';
import { searchDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

/** `GET /api/v1/suggest/`: autocomplete suggestions (spec 2.8). Counts as one search. */
export async function suggestRoute(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/suggest/',
    schema: suggestQuerySchema,
    units: () => 1,
    handle: async (params, request) => ({ status: 200, body: await suggest(searchDeps(app, request), params.q) }),
    doc: {
      operationId: 'suggest',
      summary: 'Autocomplete suggestions',
      description:
        'Suggestions for a partial query (none when the suggestion provider is unset or fails). Counts one search.',
      response: suggestResponseSchema,
    },
  });
}
