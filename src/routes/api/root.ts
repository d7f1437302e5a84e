import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { describeRoute } from './openapi.js';

/** `GET /api/v1/`: absolute URLs of every endpoint (`status` only when the status page is published). */

const ENDPOINTS: [name: string, path: string][] = [
  ['web_search', 'web/'],
  ['image_search', 'images/'],
  ['similar_image_search', 'images/similar/'],
  ['news_search', 'news/'],
  ['video_search', 'videos/'],
  ['maps', 'maps/'],
  ['translate', 'translate/'],
  ['translate_languages', 'translate/languages/'],
  ['instant', 'instant/'],
  ['cards', 'cards/'],
  ['suggest', 'suggest/'],
  ['status', 'status/'],
  ['key', 'key/'],
];

/** The body of GET /api/v1/: each endpoint's absolute URL by name. */
export const apiIndexSchema = z.object(
  Object.fromEntries(
    ENDPOINTS.map(([name, path]) => {
      const url = z.string().meta({ description: `Absolute URL of /api/v1/${path}` });
      return [name, name === 'status' ? url.optional() : url];
    }),
  ),
);

export function apiIndex(request: FastifyRequest, statusPageEnabled: boolean): Record<string, string> {
  const base = `${request.protocol}://${request.host}/api/v1/`;
  const index: Record<string, string> = {};
  for (const [name, path] of ENDPOINTS) {
    if (name === 'status' && !statusPageEnabled) continue;
    index[name] = base + path;
  }
  return index;
}

export async function apiRootRoute(app: FastifyInstance): Promise<void> {
  describeRoute(app, {
    path: '/',
    methods: ['GET'],
    doc: {
      operationId: 'apiIndex',
      summary: 'API root index',
      description:
        'Absolute URLs of the endpoints, by name (`status` only when the status page is published). Not counted as a search.',
      response: apiIndexSchema,
    },
  });
  app.get('/', async (request) => apiIndex(request, app.config.STATUS_PAGE_ENABLED));
}
