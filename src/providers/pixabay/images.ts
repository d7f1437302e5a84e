import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { ImageResult, MediaQuery } from '../../contracts/search.js';
import { primaryLanguage } from '../language.js';
import { netloc } from '../netloc.js';
import { body, list, text } from '../tolerant.js';
import type { ProviderCall, Refusal } from '../types.js';
import { PIXABAY } from './slug.js';

/*
 * Pixabay image search (provider_05): GET {PIXABAY_BASE_URL}/?key=<key>
 * &q=&page=<page>&per_page=10&image_type=all&safesearch=true|false
 * (+ lang=<the language of lang> when Pixabay lists it: PIXABAY_LANGUAGES,
 * from Pixabay's API documentation; `pt-br` asks in pt). No date filter. The key
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
 *
 * Errors come as plain text with an HTTP error status (Pixabay's API
 * documentation; client fixtures): `[ERROR 400] "page" is out of valid
 * range.` for a page past the reachable hits (at most 500, fewer for a rarer
 * query, so which page is the last is only known by asking) is a refusal of
 * the caller's page: answered as a 400 naming `page`, never recorded as
 * Pixabay failing. `[ERROR 400] Invalid or missing API key` is a failure.
 */

export const PIXABAY_PER_PAGE = 10;

/** Pixabay's `lang` values (its API documentation's list); any other language is not sent (Pixabay then uses en). */
export const PIXABAY_LANGUAGES: ReadonlySet<string> = new Set([
  'cs',
  'da',
  'de',
  'en',
  'es',
  'fr',
  'id',
  'it',
  'hu',
  'nl',
  'no',
  'pl',
  'pt',
  'ro',
  'sk',
  'fi',
  'sv',
  'tr',
  'vi',
  'th',
  'bg',
  'ru',
  'el',
  'ja',
  'ko',
  'zh',
]);
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
  const language = primaryLanguage(query.lang);
  if (PIXABAY_LANGUAGES.has(language)) params.set('lang', language);
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

/** Where each parameter Pixabay may refuse comes from (its error text quotes the parameter's name). */
const PIXABAY_PARAMETERS: Readonly<Record<string, Omit<Refusal, 'upstreamParameter' | 'value'>>> = {
  page: {
    cause: 'caller',
    parameter: 'page',
    message: 'Past the last page of images this provider has for the query.',
  },
  q: { cause: 'caller', parameter: 'q', message: 'The query is longer than this provider accepts.' },
  per_page: { cause: 'mapping', parameter: 'page', message: 'Page size not accepted by this provider.' },
  lang: { cause: 'mapping', parameter: 'lang', message: 'Language not accepted by this provider.' },
};

/** A Pixabay 400 naming the refused parameter in quotes (`[ERROR 400] "page" is out of valid range.`). */
export function pixabayRefusal(status: number, body: string, sent: URLSearchParams): Refusal | null {
  if (status !== 400) return null;
  const name = /^\s*\[ERROR 400\]\s*"([a-z_]+)"/.exec(body)?.[1];
  if (!name || !Object.hasOwn(PIXABAY_PARAMETERS, name)) return null;
  const origin = PIXABAY_PARAMETERS[name]!;
  return { ...origin, upstreamParameter: name, value: origin.cause === 'mapping' ? (sent.get(name) ?? '') : '' };
}

export function pixabayImagesCall(query: MediaQuery, config: PixabayConfig): ProviderCall<ImageResult[]> | null {
  if ([...query.q].length > PIXABAY_MAX_QUERY_LENGTH) return null;
  const params = pixabayParams(query, config.PIXABAY_API_KEY);
  return {
    provider: PIXABAY,
    request: { method: 'GET', url: `${config.PIXABAY_BASE_URL}/?${params}` },
    parse: parsePixabay,
    refusal: (status, text) => pixabayRefusal(status, text, params),
  };
}
