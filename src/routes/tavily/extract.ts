import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ExtractorBusy } from '../../contents/extract/index.js';
import type { ContentsService, ReadResult } from '../../contents/service.js';
import { CONTENTS_MAX_CHARS_MAX } from '../../search/queries.js';
import { relevantChunks } from '../../search/relevant-chunks.js';
import { faviconOf, type Refusal, reserveRest } from './answers.js';
import type { TavilyExtract } from './params.js';

/*
 * Tavily's POST /extract on the contents service (src/contents/service.ts), as POST
 * /api/v1/contents/ reads pages: every URL at once, each bounded by CONTENTS_TIMEOUT_SECONDS (and
 * by the caller's `timeout`, when shorter). A page that was not read is an entry of
 * `failed_results` with the reason and detail the contents endpoints give.
 *
 * - `query`: each page is cut to its `chunks_per_source` passages most relevant to it
 *   (src/search/relevant-chunks.ts).
 * - `include_images`: the images of the page's main content, from its markdown (a text answer has
 *   none to give: []).
 * - `include_favicon`: `/favicon.ico` of the page's final origin.
 *
 * Price: one search per URL asked, as the contents endpoints count; a URL not read gives its search
 * back. One is reserved with the admission, the others once the body is read.
 */

export interface TavilyExtractResult {
  url: string;
  title: string;
  raw_content: string;
  images?: string[];
  favicon?: string | null;
}

export interface TavilyExtractBody {
  results: TavilyExtractResult[];
  failed_results: { url: string; error: string }[];
  /** The searches this request counted. */
  credits: number;
}

const BUSY: Refusal = {
  status: 503,
  error: 'Every page reader is busy. Try again shortly.',
  headers: { 'Retry-After': '2' },
};

/** Markdown images `![alt](url "title")` of the content, deduplicated, in page order. */
export function markdownImages(markdown: string): string[] {
  const seen = new Set<string>();
  for (const m of markdown.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const url = m[1]!;
    if (/^https?:\/\//i.test(url)) seen.add(url);
  }
  return [...seen];
}

export async function runTavilyExtract(
  app: FastifyInstance,
  contents: ContentsService,
  request: FastifyRequest,
  params: TavilyExtract,
  now: () => number,
): Promise<{ ok: true; body: TavilyExtractBody } | { ok: false; refusal: Refusal }> {
  const refused = await reserveRest(app, request, params.urls.length, now);
  if (refused) return { ok: false, refusal: refused };
  const options = {
    format: params.format,
    maxChars: CONTENTS_MAX_CHARS_MAX,
    fresh: false,
    ...(params.timeoutMs === null ? {} : { signal: AbortSignal.timeout(params.timeoutMs) }),
  };
  let read: ReadResult[];
  try {
    read = await Promise.all(params.urls.map((url) => contents.read(url, options)));
  } catch (err) {
    if (err instanceof ExtractorBusy) return { ok: false, refusal: BUSY };
    throw err;
  }
  const results: TavilyExtractResult[] = [];
  const failed: TavilyExtractBody['failed_results'] = [];
  for (const r of read) {
    if (!r.ok) {
      failed.push({ url: r.failure.url, error: `${r.failure.reason}: ${r.failure.detail}` });
      continue;
    }
    const page = r.page;
    const result: TavilyExtractResult = {
      url: page.url,
      title: page.title,
      raw_content:
        params.query === null ? page.content : relevantChunks(page.content, params.query, params.chunksPerSource),
    };
    if (params.images) result.images = params.format === 'markdown' ? markdownImages(page.content) : [];
    if (params.favicon) result.favicon = faviconOf(page.final_url);
    results.push(result);
  }
  app.apiGate.giveBack(request, failed.length);
  return { ok: true, body: { results, failed_results: failed, credits: params.urls.length - failed.length } };
}
