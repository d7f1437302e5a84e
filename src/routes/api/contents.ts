import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ContentsService, ReadResult } from '../../contents/service.js';
import { ExtractorBusy } from '../../contents/extract/index.js';
import { CALLER_REASONS, type ContentsFailureEntry, type ContentsPage } from '../../contents/page.js';
import { nextMonthStart, monthStart } from '../../limits/month.js';
import {
  type ContentsBody,
  contentsBodyErrors,
  contentsBodySchema,
  contentsQuerySchema,
} from '../../search/queries.js';
import {
  contentsBatchResponseSchema,
  contentsPageSchema,
  contentsSiteFailureSchema,
} from '../../search/response-schemas.js';
import { type RouteOutcome, registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/contents/?url=` (one page) and `POST /api/v1/contents/` (`{"urls": [...]}`, 1 to 10
 * pages read concurrently): the main content of web pages as markdown or text (contents/).
 * Usage: one search per URL asked, cache hits included; a URL refused as the caller's (400, or an
 * entry of `failed` with invalid_url or blocked_address) and a page the site failed to give (502,
 * or its `failed` entry) count nothing. A POST reserves its first search with its admission and
 * the others once its body is read.
 */

/** Seconds a client is asked to wait when every page reader is busy. */
const BUSY_RETRY_AFTER = '2';
const BUSY: RouteOutcome<never> = {
  status: 503,
  body: { detail: 'Every page reader is busy. Try again shortly.' },
  headers: { 'Retry-After': BUSY_RETRY_AFTER },
};

function outcomeOf(result: ReadResult): RouteOutcome<ContentsPage> {
  if (result.ok) return { status: 200, body: result.page };
  const { reason, detail, status } = result.failure;
  if (CALLER_REASONS.has(reason)) return { status: 400, body: { url: detail, detail, reason } };
  return { status: 502, body: status === undefined ? { detail, reason } : { detail, reason, status } };
}

async function readAll(
  app: FastifyInstance,
  contents: ContentsService,
  body: ContentsBody,
  request: FastifyRequest,
): Promise<RouteOutcome<{ results: ContentsPage[]; failed: ContentsFailureEntry[] }>> {
  const reserved = await app.apiGate.reserve(request, body.urls.length - 1);
  if (reserved === 'unavailable') {
    return {
      status: 503,
      body: { detail: 'The service is temporarily unavailable.' },
      headers: { 'Retry-After': '5' },
    };
  }
  if (reserved === 'quota') {
    const resets = nextMonthStart(new Date());
    return {
      status: 429,
      body: {
        detail: `Monthly search quota exhausted: this request needs ${body.urls.length} searches. It resets on ${monthStart(resets)}.`,
      },
      headers: { 'Retry-After': String(Math.max(1, Math.ceil((resets.getTime() - Date.now()) / 1000))) },
    };
  }
  const options = { format: body.format, maxChars: body.max_chars, fresh: body.fresh };
  let read: ReadResult[];
  try {
    read = await Promise.all(body.urls.map((url) => contents.read(url, options)));
  } catch (err) {
    if (err instanceof ExtractorBusy) return BUSY;
    throw err;
  }
  const results: ContentsPage[] = [];
  const failed: ContentsFailureEntry[] = [];
  for (const r of read) {
    if (r.ok) results.push(r.page);
    else failed.push(r.failure);
  }
  app.apiGate.giveBack(request, failed.length);
  return { status: 200, body: { results, failed } };
}

export async function contentsRoute(app: FastifyInstance, contents: ContentsService): Promise<void> {
  registerSearchRoute(app, {
    path: '/contents/',
    schema: contentsQuerySchema,
    units: () => 1,
    handle: async (params) => {
      try {
        return outcomeOf(
          await contents.read(params.url, { format: params.format, maxChars: params.max_chars, fresh: params.fresh }),
        );
      } catch (err) {
        if (err instanceof ExtractorBusy) return BUSY;
        throw err;
      }
    },
    doc: {
      operationId: 'pageContents',
      summary: 'Page contents',
      description:
        "The main content of one web page, as markdown or text: no navigation, banners, share buttons, related lists, comments or footers. HTML, XHTML, plain text and PDF (50 pages at most) are read; robots.txt is honoured; private addresses are never fetched. Cached for the deployment (`cached`). Counts one search; a 400 or a 502 counts nothing. A 400 for the caller's URL carries `reason` (invalid_url or blocked_address) and `detail` besides `url`.",
      response: contentsPageSchema,
      failure: contentsSiteFailureSchema,
      reasonOn400:
        "For the caller's URL: invalid_url (not an absolute http or https URL, credentials in it, over 2,048 characters) or blocked_address (a loopback, private, link-local, CGNAT, multicast, reserved or metadata address); `url` and `detail` then say why.",
      errors: {
        502: "The site's page could not be read: `reason` names why (timeout, unreachable, http_status with `status`, too_large, unsupported_type, robots_disallowed, too_many_redirects, no_content).",
        503: 'Every page reader is busy (Retry-After).',
      },
    },
  });
  registerSearchRoute(app, {
    path: '/contents/',
    methods: ['POST'],
    jsonBody: true,
    schema: contentsBodySchema,
    precheck: (raw) => contentsBodyErrors(raw),
    units: () => 1,
    handle: (body, request) => readAll(app, contents, body, request),
    doc: {
      operationId: 'pageContentsBatch',
      summary: 'Page contents, several pages',
      description:
        'Reads 1 to 10 pages concurrently (JSON body `{"urls": [...], "format", "max_chars", "fresh"}`): `results` holds the pages read and `failed` the others with their `reason`, each in the order asked. Counts one search per page read.',
      response: contentsBatchResponseSchema,
      errors: { 503: 'Every page reader is busy (Retry-After).' },
    },
  });
}
