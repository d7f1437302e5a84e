import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { netloc } from '../netloc.js';
import { body, line, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { MARGINALIA } from './slug.js';

/*
 * Marginalia v2 (provider_03): GET {MARGINALIA_BASE_URL}/search?query=&count=10&page=<page>&nsfw=<0|1>
 * with header API-Key (Marginalia's API article, about.marginalia-search.com;
 * MarginaliaSearch/MarginaliaSearch ApiV2.java). count 1-100, page 1-based,
 * nsfw=0 when safe search is off, 1 (the upstream's "reduce" filter) when on.
 * No language or date parameter sent.
 *
 * Response: results[] with url, title, description (model/ApiSearchResult
 * in the same repository). Titles come with the index's raw layout
 * whitespace ("\n\t\t\t"): runs of whitespace become one space. URLs come
 * percent-encoded ("Python_%28programming_language%29"); merging compares a
 * canonical form of them (search/merge.ts), the URL itself is kept as sent.
 */

export const MARGINALIA_PAGE_SIZE = 10;

const schema = body({ results: list(z.object({ title: line, url: text, description: line })) });

export type MarginaliaConfig = Pick<Config, 'MARGINALIA_API_KEY' | 'MARGINALIA_BASE_URL'>;

export function marginaliaParams(query: WebQuery): URLSearchParams {
  return new URLSearchParams({
    query: query.q,
    count: String(MARGINALIA_PAGE_SIZE),
    page: String(query.page),
    nsfw: query.safe ? '1' : '0',
  });
}

export function parseMarginalia(json: unknown): EngineSlice {
  const results: EngineResult[] = [];
  for (const r of schema.parse(json).results) {
    if (!r.url) continue;
    results.push({
      title: r.title,
      url: r.url,
      description: r.description,
      display_url: netloc(r.url),
      favicon_url: '',
      age: '',
      published: '',
      sitelinks: [],
    });
  }
  return { results, altered: '' };
}

export function marginaliaCall(query: WebQuery, config: MarginaliaConfig): ProviderCall<EngineSlice> {
  return {
    provider: MARGINALIA,
    request: {
      method: 'GET',
      url: `${config.MARGINALIA_BASE_URL}/search?${marginaliaParams(query)}`,
      headers: { Accept: 'application/json', 'API-Key': config.MARGINALIA_API_KEY },
    },
    parse: parseMarginalia,
  };
}
