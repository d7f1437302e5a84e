import type { FastifyInstance } from 'fastify';
import { searchMaps } from '../../search/maps.js';
import { mapsQuerySchema } from '../../search/queries.js';
import { mapsResponseSchema } from '../../search/response-schemas.js';
import { searchDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/maps/`: geocoding, or reverse geocoding with `lat` and `lon`
 * (spec 2.6). One search per request in both modes, counted on success.
 */
export async function mapsRoute(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/maps/',
    schema: mapsQuerySchema,
    units: () => 1,
    handle: (params, request) => searchMaps(searchDeps(app, request), params),
    doc: {
      operationId: 'maps',
      summary: 'Geocoding and reverse geocoding',
      description:
        'Geocoding of `q`, or reverse geocoding when `lat` and `lon` are both given (coordinates win over `q`). Counts one search, on a 200 only.',
      response: mapsResponseSchema,
      errors: {
        502: 'Geocoding: the geocoding provider failed (reverse geocoding falls back to the coordinates instead).',
        503: 'Geocoding: no geocoding provider is configured, or the public Nominatim server is busy (with Retry-After).',
      },
    },
  });
}
