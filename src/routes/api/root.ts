import type { FastifyInstance, FastifyRequest } from 'fastify';

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
  app.get('/', async (request) => apiIndex(request, app.config.STATUS_PAGE_ENABLED));
}
