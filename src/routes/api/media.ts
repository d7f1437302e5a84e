import type { FastifyInstance } from 'fastify';
import { searchImages, searchNews, searchVideos } from '../../search/media.js';
import { imagesQuerySchema, similarImagesQuerySchema, webQuerySchema } from '../../search/queries.js';
import { searchSimilarImages } from '../../search/similar-images.js';
import {
  imagesResponseSchema,
  newsResponseSchema,
  similarImagesResponseSchema,
  videosResponseSchema,
} from '../../search/response-schemas.js';
import type { OwnErrors } from './openapi.js';
import { searchDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

const MEDIA_ERRORS: OwnErrors = {
  502: 'Every provider asked failed (each listed in `unresponsive`).',
  503: 'No provider in the requested scope is configured on this instance.',
};

/**
 * The blended media endpoints (spec 2.2-2.5, 4.2): `GET /api/v1/images/`,
 * `/images/similar/`, `/news/` and `/videos/`. Each counts one search, on a
 * 200 only (after fetching).
 */
export async function mediaRoutes(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/images/',
    schema: imagesQuerySchema,
    units: () => 1,
    handle: (params, request) => searchImages(searchDeps(app, request), params),
    doc: {
      operationId: 'imageSearch',
      summary: 'Image search',
      description: 'Image results of the configured image providers, interleaved. Counts one search, on a 200 only.',
      response: imagesResponseSchema,
      errors: MEDIA_ERRORS,
    },
  });
  registerSearchRoute(app, {
    path: '/images/similar/',
    schema: similarImagesQuerySchema,
    units: () => 1,
    handle: (params, request) => searchSimilarImages(searchDeps(app, request), params),
    doc: {
      operationId: 'similarImageSearch',
      summary: 'Images similar to an opened one',
      description:
        'A page-1 image search seeded with the cleaned caption `q`, else with `query` (at least one is required). Counts one search, on a 200 only.',
      response: similarImagesResponseSchema,
      errors: MEDIA_ERRORS,
    },
  });
  registerSearchRoute(app, {
    path: '/news/',
    schema: webQuerySchema,
    units: () => 1,
    handle: (params, request) => searchNews(searchDeps(app, request), params),
    doc: {
      operationId: 'newsSearch',
      summary: 'News search',
      description: 'News results of the configured news providers, interleaved. Counts one search, on a 200 only.',
      response: newsResponseSchema,
      errors: MEDIA_ERRORS,
    },
  });
  registerSearchRoute(app, {
    path: '/videos/',
    schema: webQuerySchema,
    units: () => 1,
    handle: (params, request) => searchVideos(searchDeps(app, request), params),
    doc: {
      operationId: 'videoSearch',
      summary: 'Video search',
      description: 'Video results of the configured video providers, interleaved. Counts one search, on a 200 only.',
      response: videosResponseSchema,
      errors: MEDIA_ERRORS,
    },
  });
}
