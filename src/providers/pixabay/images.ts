import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { ImageResult, MediaQuery } from '../../contracts/search.js';
import { MEDIA_LANGUAGES } from '../freshness.js';
import { netloc } from '../netloc.js';
import { body, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';

/*
 * Pixabay image search (provider_05): GET {PIXABAY_BASE_URL}/?key=<key>
 * &q=&page=<page>&per_page=10&image_type=all&safesearch=true|false
 * (+ lang=<lang> for en, fr, de, es, it, pt, nl). No date filter. The key
 * travels in the query string: the runner masks it out of cache keys, errors
 * and logs.
 *
 * Response hits[]: title <- tags, url <- pageURL (the image's Pixabay page),
 * thumbnail <- webformatURL, else previewURL (raw Pixabay URLs), source <-
 * the host name of pageURL ("pixabay.com"): the spec defines an image's
 * `source` as a host name (the original said "Pixabay"; the spec wins).
 * Hits without a pageURL are dropped.
 *
 * Pixabay refuses a q longer than 100 characters (400): such a query is not
 * sent to Pixabay at all rather than spending a call on a refusal that would
 * mark it down.
 */

export const PIXABAY_PER_PAGE = 10;
export const PIXABAY_MAX_QUERY_LENGTH = 100;

const hit = z.object({ tags: text, pageURL: text, webformatURL: text, previewURL: text });
const schema = body({ hits: list(hit) });

export type PixabayConfig = Pick<Config, 'PIXABAY_API_KEY' | 'PIXABAY_BASE_URL'>;

export function pixabayParams(query: MediaQuery, key: string): URLSearchParams {
  const params = new URLSearchParams({
    key,
    q: query.q,
    page: String(query.page),
    per_page: String(PIXABAY_PER_PAGE),
    image_type: 'all',
    safesearch: query.safe ? 'true' : 'false',
  });
  if (MEDIA_LANGUAGES.has(query.lang)) params.set('lang', query.lang);
  return params;
}

export function parsePixabay(json: unknown): ImageResult[] {
  const out: ImageResult[] = [];
  for (const h of schema.parse(json).hits) {
    if (!h.pageURL) continue;
    const source = netloc(h.pageURL).replace(/:\d+$/, '').toLowerCase();
    out.push({ title: h.tags, url: h.pageURL, source, thumbnail: h.webformatURL || h.previewURL });
  }
  return out;
}

export function pixabayImagesCall(query: MediaQuery, config: PixabayConfig): ProviderCall<ImageResult[]> | null {
  if ([...query.q].length > PIXABAY_MAX_QUERY_LENGTH) return null;
  return {
    provider: 'provider_05',
    request: { method: 'GET', url: `${config.PIXABAY_BASE_URL}/?${pixabayParams(query, config.PIXABAY_API_KEY)}` },
    parse: parsePixabay,
  };
}
