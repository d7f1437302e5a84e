import type { FastifyInstance } from 'fastify';
import type { ContentsService } from '../../contents/service.js';
import { webSearchQuerySchema } from '../../search/queries.js';
import { webResponseSchema } from '../../search/response-schemas.js';
import { searchWeb } from '../../search/web.js';
import { withContents } from '../../search/web-contents.js';
import { searchDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/web/`: up to four web engines at once, merged (spec 2.1, 4.1), and with
 * `contents=n` the pages of the first n results (when page contents are on).
 * Usage: one search per engine in the requested scope and one per page asked, counted on success
 * only; a page not read gives its search back.
 */
export async function webRoute(app: FastifyInstance, contents: ContentsService | null): Promise<void> {
  registerSearchRoute(app, {
    path: '/web/',
    // With page contents off, `contents` is read (and validated) but ignored.
    schema: webSearchQuerySchema,
    units: (params) => (params ? params.engine.length + (contents ? params.contents : 0) : 0),
    handle: async (params, request) => {
      const outcome = await searchWeb(searchDeps(app, request), params);
      if (outcome.status !== 200 || params.contents === 0 || !contents) return outcome;
      const pages = params.contents;
      const read = await withContents(outcome.body.results, pages, contents);
      app.apiGate.giveBack(request, read.unread);
      return { status: 200, body: { ...outcome.body, results: read.results } };
    },
    doc: {
      operationId: 'webSearch',
      summary: 'Web search',
      description:
        'Up to four web engines at once, merged. With `contents=n`, the pages of the first n results are read too (each result gets `contents` or `contents_error`), within CONTENTS_TIMEOUT_SECONDS. Counts one search per engine in the requested scope and one per page read, on a 200 only.',
      response: webResponseSchema,
      errors: {
        502: 'Every engine asked failed (each listed in `unresponsive`).',
        503: 'No engine in the requested scope is configured on this instance.',
      },
    },
  });
}
