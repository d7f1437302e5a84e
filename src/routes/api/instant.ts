import type { FastifyInstance } from 'fastify';
import { instant } from '../../search/instant/index.js';
import { instantQuerySchema } from '../../search/queries.js';
import { instantResponseSchema } from '../../search/response-schemas.js';
import { instantDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/instant/`: an instant answer or null (spec 2.9, docs/api.md): always 200 `{query, answer}` for a valid q. Counts one search,
 * before the answer is looked for.
 */
export async function instantRoute(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/instant/',
    schema: instantQuerySchema,
    units: () => 1,
    count: 'before',
    handle: async (params, request) => {
      const userAgent = request.headers['user-agent'];
      const body = await instant(instantDeps(app, request), {
        q: params.q,
        lang: params.lang,
        ip: request.ip ?? '',
        userAgent: typeof userAgent === 'string' ? userAgent : '',
        log: request.log,
      });
      return { status: 200, body };
    },
    doc: {
      operationId: 'instant',
      summary: 'Instant answer',
      description:
        'An instant answer (maths, conversions, weather, currency, clocks, hashes, QR codes, IP…) or null. Counts one search.',
      response: instantResponseSchema,
    },
  });
}
