import type { FastifyInstance } from 'fastify';
import { webQuerySchema } from '../../search/queries.js';
import { webResponseSchema } from '../../search/response-schemas.js';
import { searchWeb } from '../../search/web.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/web/`: up to four web engines at once, merged (spec 2.1, 4.1).
 * Usage: one search per engine in the requested scope, counted on success only.
 */
export async function webRoute(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/web/',
    schema: webQuerySchema,
    units: (params) => params?.engine.length ?? 0,
    handle: (params) => searchWeb(app, params),
    doc: {
      operationId: 'webSearch',
      summary: 'Web search',
      description:
        'Up to four web engines at once, merged. Counts one search per engine in the requested scope, on a 200 only.',
      response: webResponseSchema,
      errors: {
        502: 'Every engine asked failed (each listed in `unresponsive`).',
        503: 'No engine in the requested scope is configured on this instance.',
      },
    },
  });
}
