import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { ImageResult, MediaQuery } from '../../contracts/search.js';
import { body, line, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { braveAcceptsQuery, braveHeaders, braveLanguageParams, braveRefusal } from './common.js';
import { BRAVE } from './slug.js';

/*
 * Brave image search (provider_01): GET {BRAVE_BASE_URL}/images/search
 * q, count=min(page*10, 200) (1-200), safesearch=off|strict (the only two
 * values images take), search_lang/country from lang (common.ts). No date
 * filter (the endpoint has no freshness). Brave's API reference for image
 * search; brave/brave-search-mcp-server src/tools/images/params.ts.
 *
 * The endpoint has no offset, so a page is cut out locally: ask for the first
 * page*10 results and keep [(page-1)*10, page*10). Brave serves at most 200
 * images, i.e. 20 pages; past page 20 Brave is not asked at all (the original
 * asked and sliced nothing: same empty answer, without spending a call).
 *
 * Response results[]: title, url (the page the image is on), source (its host
 * name; meta_url.hostname when absent), thumbnail.src (Brave's proxied
 * thumbnail). Items without a url are dropped.
 */

export const BRAVE_IMAGES_PER_PAGE = 10;
export const BRAVE_IMAGES_MAX = 200;

const item = z.object({
  title: line,
  url: text,
  source: text,
  thumbnail: nested({ src: text }),
  meta_url: nested({ hostname: text }),
});

const schema = body({ results: list(item) });

export type BraveImagesConfig = Pick<Config, 'BRAVE_API_KEY' | 'BRAVE_BASE_URL'>;

export function braveImagesParams(query: MediaQuery): URLSearchParams {
  const params = new URLSearchParams({
    q: query.q,
    count: String(Math.min(query.page * BRAVE_IMAGES_PER_PAGE, BRAVE_IMAGES_MAX)),
    safesearch: query.safe ? 'strict' : 'off',
  });
  braveLanguageParams(params, query.lang);
  return params;
}

/** The results of `page` out of Brave's answer for the first page*10 images. */
export function parseBraveImages(json: unknown, page: number): ImageResult[] {
  const start = (page - 1) * BRAVE_IMAGES_PER_PAGE;
  const out: ImageResult[] = [];
  for (const r of schema.parse(json).results.slice(start, start + BRAVE_IMAGES_PER_PAGE)) {
    if (!r.url) continue;
    out.push({ title: r.title, url: r.url, source: r.source || r.meta_url.hostname, thumbnail: r.thumbnail.src });
  }
  return out;
}

export function braveImagesCall(query: MediaQuery, config: BraveImagesConfig): ProviderCall<ImageResult[]> | null {
  if ((query.page - 1) * BRAVE_IMAGES_PER_PAGE >= BRAVE_IMAGES_MAX || !braveAcceptsQuery(query.q)) return null;
  const params = braveImagesParams(query);
  return {
    provider: BRAVE,
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/images/search?${params}`,
      headers: braveHeaders(config.BRAVE_API_KEY),
    },
    parse: (json) => parseBraveImages(json, query.page),
    refusal: (status, text) => braveRefusal(status, text, params),
  };
}
