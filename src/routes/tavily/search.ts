import type { FastifyInstance, FastifyRequest } from 'fastify';
import { searchImages, searchNews } from '../../search/media.js';
import { CONTENTS_MAX_CHARS_MAX, ENGINE_SLUGS, type WebParams } from '../../search/queries.js';
import { withContents } from '../../search/web-contents.js';
import { searchWeb } from '../../search/web.js';
import { plainText } from '../searxng/results.js';
import { faviconOf, publishedOf, type Refusal, refusalOf, reserveRest } from './answers.js';
import { inDomain, type TavilySearch } from './params.js';
import { searchDeps } from '../feature-deps.js';

/*
 * Tavily's POST /search on Sift's features: topic general (and finance) is the web search of every
 * engine (src/search/web.ts), topic news the news search (src/search/media.ts); include_images adds
 * the image search, include_raw_content reads the pages of the results (the contents service,
 * through `withContents` as web search's `contents=n`).
 *
 * Price, as the REST calls doing the same work: one search per web engine in scope (news: one),
 * one for the images, one per page asked (max_results); a page not read (fewer results, or a
 * failed read) and an image search that failed give theirs back. One search is reserved with the
 * admission, the rest once the body is read.
 *
 * `score` comes from the merge rank: 1 - rank / (n + 1) for the rank (from 0) among the n merged
 * results, so the best result is near 1 and scores fall with rank.
 */

export interface TavilyResult {
  title: string;
  url: string;
  content: string;
  score: number;
  raw_content: string | null;
  published_date?: string;
  favicon?: string | null;
}

export interface TavilySearchBody {
  query: string;
  follow_up_questions: null;
  answer: null;
  images: (string | { url: string; description: string })[];
  results: TavilyResult[];
  /** The searches this request counted. */
  credits: number;
}

interface Found {
  title: string;
  url: string;
  description: string;
  age: string;
  favicon: string;
}

const IMAGES_MIN = 5;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

/** The searches a request counts before any is given back. */
export function searchUnits(params: TavilySearch, contentsOn: boolean): number {
  return (
    (params.news ? 1 : ENGINE_SLUGS.length) +
    (params.images ? 1 : 0) +
    (params.rawContent !== null && contentsOn ? params.maxResults : 0)
  );
}

function kept(params: TavilySearch, r: Found): boolean {
  if (params.includeDomains.length > 0 && !params.includeDomains.some((d) => inDomain(r.url, d))) return false;
  if (params.excludeDomains.some((d) => inDomain(r.url, d))) return false;
  const day = publishedOf(r.age)?.slice(0, 10);
  if (day !== undefined && params.since !== null && day < params.since) return false;
  if (day !== undefined && params.until !== null && day > params.until) return false;
  return true;
}

export async function runTavilySearch(
  app: FastifyInstance,
  request: FastifyRequest,
  params: TavilySearch,
  now: () => number,
): Promise<{ ok: true; body: TavilySearchBody } | { ok: false; refusal: Refusal }> {
  const contents = app.contents;
  const total = searchUnits(params, contents !== null);
  const refused = await reserveRest(app, request, total, now);
  if (refused) return { ok: false, refusal: refused };
  let givenBack = 0;
  const giveBack = (units: number) => {
    if (units <= 0) return;
    givenBack += units;
    app.apiGate.giveBack(request, units);
  };

  const deps = searchDeps(app, request);
  const webParams: WebParams = {
    q: params.query,
    engine: [...ENGINE_SLUGS],
    safe: true,
    lang: '',
    page: 1,
    date: params.date,
  };
  const main = params.news
    ? searchNews(deps, webParams).then((o) =>
        o.status === 200
          ? { status: 200 as const, found: o.body.results.map((r): Found => ({ ...r, favicon: '' })) }
          : o,
      )
    : searchWeb(deps, webParams).then((o) =>
        o.status === 200
          ? { status: 200 as const, found: o.body.results.map((r): Found => ({ ...r, favicon: r.favicon_url })) }
          : o,
      );
  const imageSearch = params.images
    ? searchImages(deps, { q: params.query, engine: [...ENGINE_SLUGS], safe: true, lang: '', page: 1 })
    : null;
  const [outcome, images] = await Promise.all([main, imageSearch]);
  if (outcome.status !== 200) return { ok: false, refusal: refusalOf(outcome) };
  if (images && images.status !== 200) giveBack(1);

  const merged = outcome.found;
  const ranked = merged.map((r, rank) => ({ r, score: round4(1 - rank / (merged.length + 1)) }));
  const chosen = ranked.filter(({ r }) => kept(params, r)).slice(0, params.maxResults);

  let pages: (string | null)[] = chosen.map(() => null);
  if (params.rawContent !== null && contents) {
    const read = await withContents(
      chosen.map(({ r }) => r),
      params.maxResults,
      contents,
      { format: params.rawContent, maxChars: CONTENTS_MAX_CHARS_MAX },
    );
    giveBack(read.unread);
    pages = read.results.map((r) => r.contents?.content ?? null);
  }

  const results = chosen.map(({ r, score }, i): TavilyResult => {
    const result: TavilyResult = {
      title: plainText(r.title),
      url: r.url,
      content: plainText(r.description),
      score,
      raw_content: pages[i] ?? null,
    };
    // The upstream's machine date where it sent one, else a date written as the age.
    const date = ('published' in r && typeof r.published === 'string' && r.published) || publishedOf(r.age);
    if (date !== null) result.published_date = date;
    if (params.favicon) result.favicon = faviconOf(r.url, r.favicon);
    return result;
  });
  // As many images as results, five at least (Tavily's own answers carry a handful).
  const imageList =
    images?.status === 200
      ? images.body.results.filter((image) => image.thumbnail !== '').slice(0, Math.max(params.maxResults, IMAGES_MIN))
      : [];
  return {
    ok: true,
    body: {
      query: params.query,
      follow_up_questions: null,
      answer: null,
      images: imageList.map((image) =>
        params.imageDescriptions ? { url: image.thumbnail, description: image.title } : image.thumbnail,
      ),
      results,
      credits: total - givenBack,
    },
  };
}
