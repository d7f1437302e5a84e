import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';

/*
 * Staan (provider_04): GET {STAAN_BASE_URL}/search/web?q=&offset=<(page-1)*10>&market=<en-US|fr-FR|de-DE>
 * with Authorization: Bearer <key>. Staan serves at most 40 results (offset
 * ≤ 30) and queries of at most 400 characters, so it is only asked for pages
 * 1-4 and short queries (staanAccepts). No safe-search or date parameter.
 */

export const STAAN_PAGE_SIZE = 10;
export const STAAN_MAX_OFFSET = 30;
export const STAAN_MAX_QUERY = 400;

const MARKETS: Readonly<Record<string, string>> = { en: 'en-US', fr: 'fr-FR', de: 'de-DE' };

const schema = body({
  web: nested({
    results: list(
      z.object({ title: text, url: text, snippet: text, display_url: text, hostname: text, favicon_url: text }),
    ),
  }),
});

export type StaanConfig = Pick<Config, 'STAAN_API_KEY' | 'STAAN_BASE_URL'>;

/** Whether Staan can answer this query at all (pages 1-4, at most 400 characters). */
export function staanAccepts(query: Pick<WebQuery, 'q' | 'page'>): boolean {
  if ((query.page - 1) * STAAN_PAGE_SIZE > STAAN_MAX_OFFSET) return false;
  return query.q.length <= STAAN_MAX_QUERY || [...query.q].length <= STAAN_MAX_QUERY;
}

export function staanParams(query: WebQuery): URLSearchParams {
  const params = new URLSearchParams({ q: query.q, offset: String((query.page - 1) * STAAN_PAGE_SIZE) });
  const market = Object.hasOwn(MARKETS, query.lang) ? MARKETS[query.lang] : undefined;
  if (market) params.set('market', market);
  return params;
}

export function parseStaan(json: unknown): EngineSlice {
  const results: EngineResult[] = [];
  for (const r of schema.parse(json).web.results) {
    if (!r.url) continue;
    results.push({
      title: r.title,
      url: r.url,
      description: r.snippet,
      display_url: r.display_url || r.hostname,
      favicon_url: r.favicon_url,
      age: '',
      sitelinks: [],
    });
  }
  return { results, altered: '' };
}

export function staanCall(query: WebQuery, config: StaanConfig): ProviderCall<EngineSlice> {
  return {
    provider: 'provider_04',
    request: {
      method: 'GET',
      url: `${config.STAAN_BASE_URL}/search/web?${staanParams(query)}`,
      headers: { Accept: 'application/json', Authorization: `Bearer ${config.STAAN_API_KEY}` },
    },
    parse: parseStaan,
  };
}
