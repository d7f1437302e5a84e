import { isIP } from 'node:net';
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

/**
 * Where clients reach this server: PUBLIC_URL; unset, the address it listens on (a wildcard address
 * as localhost) with the request's scheme (X-Forwarded-Proto only from a trusted proxy). Never the
 * request's Host: an index built from it would hand a shared cache, or a client that follows it,
 * whatever host a request claimed.
 */
export function publicBase(request: FastifyRequest): string {
  const { config } = request.server;
  if (config.PUBLIC_URL) return config.PUBLIC_URL;
  const address = request.server.server.address();
  const port = address && typeof address === 'object' ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
  return `${request.protocol}://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

export function apiIndex(request: FastifyRequest, statusPageEnabled: boolean): Record<string, string> {
  const base = `${publicBase(request)}/api/v1/`;
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
