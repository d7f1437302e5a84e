import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { GatePlan } from '../../gate/api-gate.js';
import { requestIdOf, responseTime, sendRefusal, tavilyError } from './answers.js';
import { runTavilyExtract } from './extract.js';
import { parseTavilyExtract, parseTavilySearch } from './params.js';
import { runTavilySearch } from './search.js';

/*
 * Tavily's API for its SDKs and the tools built on them (tavily-python and langchain-tavily,
 * @tavily/core): POST /tavily/search and POST /tavily/extract, so that a client switches over with
 * its base URL (`api_base_url="https://sift.example/tavily"`) and a Sift key as its API key (sent
 * as `Authorization: Bearer <key>`).
 *
 * Every request passes the API gate as every other door does (keys, rate limits, monthly quota,
 * usage), its refusals and every other error in Tavily's shape `{"detail": {"error": "…"}}`. A
 * body is read after admission, so a request reserves one search with it and the rest of its
 * price once its body is read (search.ts, extract.ts say what each counts).
 */

export interface TavilyRoutesOptions {
  /** The clock of quota messages (ms since the epoch); default Date.now. */
  now?: () => number;
}

/** A POST's body is read after admission: one search is reserved before, the rest after (`apiGate.reserve`). */
const FIRST_SEARCH: GatePlan = { metered: true, units: 1 };
const firstSearch = (_request: FastifyRequest): GatePlan => FIRST_SEARCH;

async function tavilyRoutesScope(scope: FastifyInstance, options: TavilyRoutesOptions = {}): Promise<void> {
  const now = options.now ?? Date.now;
  scope.apiGate.guard(scope, { limited: true, refusal: tavilyError });

  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(status).send(tavilyError('Internal server error.'));
    }
    const message =
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
        ? 'Request body is not valid JSON.'
        : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'Request body is too large.'
          : error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? 'Unsupported media type: send JSON.'
            : error.message || 'Bad request.';
    return reply.code(status).send(tavilyError(message));
  });
  scope.setNotFoundHandler((_request, reply) =>
    reply
      .code(404)
      .send(tavilyError(`Not found: this API has POST ${scope.prefix}/search and POST ${scope.prefix}/extract.`)),
  );

  scope.post('/search', { config: { apiGate: firstSearch } }, async (request, reply) => {
    const parsed = parseTavilySearch(request.body, now());
    if (!parsed.ok) return reply.code(400).send(tavilyError(parsed.error));
    const params = parsed.value;
    const done = await runTavilySearch(scope, request, params, now);
    if (!done.ok) return sendRefusal(reply, done.refusal);
    const { credits, ...body } = done.body;
    return {
      ...body,
      response_time: responseTime(reply),
      request_id: requestIdOf(request),
      ...(params.usage ? { usage: { credits } } : {}),
    };
  });

  scope.post('/extract', { config: { apiGate: firstSearch } }, async (request, reply) => {
    const contents = scope.contents;
    if (!contents) {
      return reply
        .code(404)
        .send(tavilyError('Page contents are turned off on this instance (CONTENTS_ENABLED=false).'));
    }
    const parsed = parseTavilyExtract(request.body);
    if (!parsed.ok) return reply.code(400).send(tavilyError(parsed.error));
    const params = parsed.value;
    const done = await runTavilyExtract(scope, contents, request, params, now);
    if (!done.ok) return sendRefusal(reply, done.refusal);
    const { credits, ...body } = done.body;
    return {
      ...body,
      response_time: responseTime(reply),
      request_id: requestIdOf(request),
      ...(params.usage ? { usage: { credits } } : {}),
    };
  });
}

/** Registered by the app (app.ts) after the services it uses, which Fastify checks by name. */
export const tavilyRoutes = fastifyPlugin(tavilyRoutesScope, {
  name: 'sift-tavily',
  encapsulate: true,
  dependencies: ['sift-upstream', 'sift-contents', 'sift-gate'],
});
