import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { body, list, nested, rawList, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { braveHeaders, braveLanguageParams, FRESHNESS } from './common.js';

/*
 * Brave web search (provider_01): GET {BRAVE_BASE_URL}/web/search
 * q, count=10, offset=page-1 (Brave pages are 0-based page indexes),
 * safesearch=off|strict, search_lang/country from lang, freshness from date.
 * Response: web.results[] and query.altered (the spell-corrected query).
 */

export const BRAVE_WEB_COUNT = 10;

const item = z.object({
  title: text,
  url: text,
  description: text,
  age: text,
  profile: nested({ img: text }),
  meta_url: nested({ netloc: text, path: text }),
  deep_results: nested({ buttons: rawList }),
});

const schema = body({
  query: nested({ altered: text }),
  web: nested({ results: list(item) }),
});

export type BraveWebConfig = Pick<Config, 'BRAVE_API_KEY' | 'BRAVE_BASE_URL'>;

export function braveWebParams(query: WebQuery): URLSearchParams {
  const params = new URLSearchParams({
    q: query.q,
    count: String(BRAVE_WEB_COUNT),
    offset: String(query.page - 1),
    safesearch: query.safe ? 'strict' : 'off',
  });
  braveLanguageParams(params, query.lang);
  if (query.date) params.set('freshness', FRESHNESS[query.date]);
  return params;
}

export function parseBraveWeb(json: unknown): EngineSlice {
  const data = schema.parse(json);
  const results: EngineResult[] = [];
  for (const r of data.web.results) {
    if (!r.url) continue;
    const netloc = r.meta_url.netloc;
    const path = r.meta_url.path;
    results.push({
      title: r.title,
      url: r.url,
      description: r.description,
      display_url: path ? `${netloc} ${path}`.trim() : netloc,
      favicon_url: r.profile.img,
      age: r.age,
      sitelinks: r.deep_results.buttons,
    });
  }
  return { results, altered: data.query.altered };
}

export function braveWebCall(query: WebQuery, config: BraveWebConfig): ProviderCall<EngineSlice> {
  return {
    provider: 'provider_01',
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/web/search?${braveWebParams(query)}`,
      headers: braveHeaders(config.BRAVE_API_KEY),
    },
    parse: parseBraveWeb,
  };
}
