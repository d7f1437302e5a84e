import type { FastifyInstance } from 'fastify';
import { noQuerySchema, translateBodyErrors, translateInput, translateSchema } from '../../search/queries.js';
import { translate, translationLanguages } from '../../search/translate.js';
import { languagesResponseSchema, translateResponseSchema } from '../../search/response-schemas.js';
import { searchDeps } from '../feature-deps.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET|POST /api/v1/translate/` (POST: form-encoded or a JSON object) and
 * `GET /api/v1/translate/languages/` (spec 2.7). One search each, counted
 * before LibreTranslate is asked, so a 503 still counts; a 400 counts nothing.
 * Bodies of other types (text/plain too): 415. A JSON value that is not an
 * object, non-string fields, malformed JSON: 400.
 */
export async function translateRoute(app: FastifyInstance): Promise<void> {
  registerSearchRoute(app, {
    path: '/translate/',
    methods: ['GET', 'POST'],
    schema: translateSchema,
    input: (request) => translateInput(request.method === 'POST' ? request.body : request.query),
    precheck: (_raw, request) => (request.method === 'POST' ? translateBodyErrors(request.body) : null),
    units: () => 1,
    count: 'before',
    handle: (params, request) => translate(searchDeps(app, request), params),
    doc: {
      operationId: 'translate',
      summary: 'Translate text',
      description:
        'Translates `q` (or `text`) into `target`. POST takes the same fields form-encoded or as a JSON object. Counts one search, also when it answers 503.',
      response: translateResponseSchema,
      errors: { 503: 'Translation is not configured, or the translation backend failed.' },
    },
  });
  registerSearchRoute(app, {
    path: '/translate/languages/',
    schema: noQuerySchema,
    units: () => 1,
    count: 'before',
    handle: async (_params, request) => ({ status: 200, body: await translationLanguages(searchDeps(app, request)) }),
    doc: {
      operationId: 'translateLanguages',
      summary: 'Translation languages',
      description: "The translation backend's languages (a fallback list without one). Counts one search.",
      response: languagesResponseSchema,
    },
  });
}
