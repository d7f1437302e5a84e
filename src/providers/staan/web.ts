import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { body, line, list, nested, text } from '../tolerant.js';
import { formatPublished, isoUtc } from '../dates.js';
import type { ProviderCall, Refusal } from '../types.js';
import { STAAN } from './slug.js';

/*
 * Staan (provider_04), the European index behind Qwant and Ecosia:
 * GET {STAAN_BASE_URL}/search/web?q=&offset=<(page-1)*10>&market=<market>
 * with Authorization: Bearer <key>.
 *
 * Request. No first-party reference page was at hand; every fact below is
 * what maintained clients send and document: the Staan web-search provider
 * of OpenClaw (its STAAN_MARKETS list), Open WebUI's Staan adapter (GET with
 * q and market, e.g. 'en-us'), and the Staan settings of a Django client
 * (default market 'fr-fr'). `market` is one of twelve lower-case
 * language-region codes: fr-fr, de-de, en-us, en-gb, en-fr, en-ca, en-au,
 * en-in, en-ie, en-nz, en-za, en-sg; anything else (upper case included) is
 * refused. `lang` maps to the market of its region when Staan has it
 * (en-gb, en-ca, …), else to en-us, fr-fr or de-de for en, fr and de; other
 * languages send no market (Staan then answers from its default, fr-fr).
 * offset is a multiple of 10 up to 30 (10 results a page, 40 at most) and q
 * at most 400 characters, so Staan is only asked for pages 1-4 and short
 * queries (staanAccepts). No safe-search or date parameter; `count` is not
 * sent (one client reports any value but 10 refused).
 *
 * Response: web.results[] with title, url, snippet, hostname, display_url
 * ("example.fr › sobriete"), favicon_url, published_date ("2025-03-14", as age
 * "March 14, 2025"). display_url, favicon_url and published_date are seen
 * in one client only: read when there (display_url else hostname).
 *
 * Refusals: 400 {"statusCode": 400, "error": "Bad Request", "message":
 * ["market must be one of the following values: …"]} (the framework shape
 * a client documents); 401 {"code": "INVALID_CREDENTIALS"} is a failure.
 */

export const STAAN_PAGE_SIZE = 10;
export const STAAN_MAX_OFFSET = 30;
export const STAAN_MAX_QUERY = 400;

/** Staan's markets (see above), exactly as it accepts them: lower case. */
export const STAAN_MARKETS: ReadonlySet<string> = new Set([
  'fr-fr',
  'de-de',
  'en-us',
  'en-gb',
  'en-fr',
  'en-ca',
  'en-au',
  'en-in',
  'en-ie',
  'en-nz',
  'en-za',
  'en-sg',
]);

/** The market of a language whose tag names no market Staan has. */
const LANGUAGE_MARKETS: Readonly<Record<string, string>> = { en: 'en-us', fr: 'fr-fr', de: 'de-de' };

/** `lang` as one of Staan's markets, or '' when none fits. */
export function staanMarket(lang: string): string {
  const tag = lang.toLowerCase().replace(/_/g, '-');
  const [language = '', region = ''] = tag.split('-');
  const regional = `${language}-${region === 'uk' ? 'gb' : region}`;
  if (region && STAAN_MARKETS.has(regional)) return regional;
  return Object.hasOwn(LANGUAGE_MARKETS, language) ? LANGUAGE_MARKETS[language]! : '';
}

/** Where each parameter Staan may refuse comes from. */
const STAAN_PARAMETERS: Readonly<Record<string, Omit<Refusal, 'upstreamParameter' | 'value'>>> = {
  q: { cause: 'caller', parameter: 'q', message: 'The query is not one this provider accepts.' },
  offset: { cause: 'caller', parameter: 'page', message: 'Past the last page this provider serves for a query.' },
  market: { cause: 'mapping', parameter: 'lang', message: 'Market not accepted by this provider.' },
};

/** A Staan 400 whose message starts with the parameter it refused ("market must be one of …"). */
export function staanRefusal(status: number, body: string, sent: URLSearchParams): Refusal | null {
  if (status !== 400) return null;
  const name = /"message"\s*:\s*\[?\s*"([a-z_]+) (?:must|should)\b/.exec(body)?.[1];
  if (!name || !Object.hasOwn(STAAN_PARAMETERS, name)) return null;
  const origin = STAAN_PARAMETERS[name]!;
  return { ...origin, upstreamParameter: name, value: origin.cause === 'mapping' ? (sent.get(name) ?? '') : '' };
}

const schema = body({
  web: nested({
    results: list(
      z.object({
        title: line,
        url: text,
        snippet: line,
        display_url: line,
        hostname: text,
        favicon_url: text,
        published_date: text,
      }),
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
  const market = staanMarket(query.lang);
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
      age: formatPublished(r.published_date),
      published: isoUtc(r.published_date),
      sitelinks: [],
    });
  }
  return { results, altered: '' };
}

export function staanCall(query: WebQuery, config: StaanConfig): ProviderCall<EngineSlice> {
  const params = staanParams(query);
  return {
    provider: STAAN,
    request: {
      method: 'GET',
      url: `${config.STAAN_BASE_URL}/search/web?${params}`,
      headers: { Accept: 'application/json', Authorization: `Bearer ${config.STAAN_API_KEY}` },
    },
    parse: parseStaan,
    refusal: (status, text) => staanRefusal(status, text, params),
  };
}
