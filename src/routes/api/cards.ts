import type { FastifyInstance } from 'fastify';
import { searchCards } from '../../search/cards/index.js';
import { cardsQuerySchema } from '../../search/queries.js';
import { cardsResponseSchema } from '../../search/response-schemas.js';
import { searchDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/cards/`: knowledge cards for a query (docs/api.md):
 * `{query, wikipedia, thetvdb, tripadvisor, stackexchange, map}`.
 * Usage: one search, counted before the lookups.
 */
export async function cardsRoute(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/cards/',
    schema: cardsQuerySchema,
    units: () => 1,
    count: 'before',
    handle: (params, request) => searchCards(searchDeps(app, request), params),
    doc: {
      operationId: 'cards',
      summary: 'Knowledge cards',
      description:
        'Knowledge cards for the query, each an object or null (a card that cannot be had is null), and the providers that failed in `unresponsive`. Counts one search.',
      response: cardsResponseSchema,
      errors: { 502: 'Every provider asked failed and no map answer was found (each listed in `unresponsive`).' },
    },
  });
}
