import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { MediaQuery, NewsResult } from '../../contracts/search.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { braveAcceptsQuery, braveHeaders } from './common.js';
import { braveWebParams } from './web.js';

/*
 * Brave news search (provider_01): GET {BRAVE_BASE_URL}/news/search with the
 * parameters of web search (web.ts): q, count=10, offset=page-1 (a 0-based
 * page index), safesearch=off|strict, search_lang/country, freshness from date.
 *
 * Brave's offset stops at 9 (upstreams.md), so pages past 10 cannot be served:
 * the reference guesses such a call fails and marks Brave down (unconfirmed).
 * We do not ask Brave past page 10 (no call, no false "down"; the other news
 * provider still answers), as web search skips Staan past its last page.
 *
 * Response results[] (Brave's raw news objects): title, url, description,
 * age (Brave's relative text), hostname <- meta_url.hostname, thumbnail <-
 * thumbnail.src, source <- a `source` string when Brave sends one (whether it
 * does is unconfirmed; usually ""). Items without a url are dropped.
 */

export const BRAVE_MEDIA_MAX_PAGE = 10;

const item = z.object({
  title: text,
  url: text,
  description: text,
  age: text,
  source: text,
  thumbnail: nested({ src: text }),
  meta_url: nested({ hostname: text }),
});

const schema = body({ results: list(item) });

export type BraveNewsConfig = Pick<Config, 'BRAVE_API_KEY' | 'BRAVE_BASE_URL'>;

export function parseBraveNews(json: unknown): NewsResult[] {
  const out: NewsResult[] = [];
  for (const r of schema.parse(json).results) {
    if (!r.url) continue;
    out.push({
      title: r.title,
      url: r.url,
      description: r.description,
      age: r.age,
      source: r.source,
      hostname: r.meta_url.hostname,
      thumbnail: r.thumbnail.src,
    });
  }
  return out;
}

export function braveNewsCall(query: MediaQuery, config: BraveNewsConfig): ProviderCall<NewsResult[]> | null {
  if (query.page > BRAVE_MEDIA_MAX_PAGE || !braveAcceptsQuery(query.q)) return null;
  return {
    provider: 'provider_01',
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/news/search?${braveWebParams(query)}`,
      headers: braveHeaders(config.BRAVE_API_KEY),
    },
    parse: parseBraveNews,
  };
}
