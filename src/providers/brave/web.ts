import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { body, line, list, nested, rawList, text } from '../tolerant.js';
import { isoUtc } from '../dates.js';
import type { ProviderCall } from '../types.js';
import {
  BRAVE_MAX_PAGE,
  braveAcceptsQuery,
  braveHeaders,
  braveLanguageParams,
  braveRefusal,
  FRESHNESS,
} from './common.js';
import { BRAVE } from './slug.js';

/*
 * Brave web search (provider_01): GET {BRAVE_BASE_URL}/web/search
 *
 * Request (Brave's API reference, web search query parameters; the same in
 * brave/brave-search-mcp-server src/tools/web/params.ts): q (at most 400
 * characters and 50 words), count=10 (1-20), offset=page-1 (a 0-based page
 * index, 0-9: so only pages 1-10 are asked for), safesearch=off|strict
 * (off|moderate|strict), search_lang and country from lang (mapped to Brave's
 * lists, common.ts), freshness=pd|pw|pm|py from date.
 *
 * Response (Brave's published web search sample; upstreams.md section 1):
 * web.results[] with title, url, description (with <strong> highlight
 * markup), age ("March 3, 2024"), page_age (ISO, no zone: UTC) as published, profile.img (favicon), meta_url.netloc and
 * meta_url.path (a breadcrumb "› book › ch04"), deep_results.buttons[]
 * (sitelinks); query.altered is the spell-corrected query Brave searched.
 * Whitespace runs in titles, descriptions and the display URL become one space.
 * Errors and refusals: common.ts.
 */

export const BRAVE_WEB_COUNT = 10;

const item = z.object({
  title: line,
  url: text,
  description: line,
  age: text,
  page_age: text,
  profile: nested({ img: text }),
  meta_url: nested({ netloc: line, path: line }),
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

/** Whether Brave is asked for this query: a query it takes, and a page within its ten. */
export function braveWebAccepts(query: Pick<WebQuery, 'q' | 'page'>): boolean {
  return query.page <= BRAVE_MAX_PAGE && braveAcceptsQuery(query.q);
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
      display_url: netloc && path ? `${netloc} ${path}` : netloc || path,
      favicon_url: r.profile.img,
      age: r.age,
      published: isoUtc(r.page_age),
      sitelinks: r.deep_results.buttons,
    });
  }
  return { results, altered: data.query.altered };
}

export function braveWebCall(query: WebQuery, config: BraveWebConfig): ProviderCall<EngineSlice> {
  const params = braveWebParams(query);
  return {
    provider: BRAVE,
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/web/search?${params}`,
      headers: braveHeaders(config.BRAVE_API_KEY),
    },
    parse: parseBraveWeb,
    refusal: (status, text) => braveRefusal(status, text, params),
  };
}
