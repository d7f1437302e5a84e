import type { DateFilter } from '../../contracts/search.js';
import { langParts } from '../language.js';
import type { Refusal } from '../types.js';

/*
 * What every Brave Search API call shares (provider_01).
 *
 * Request headers: X-Subscription-Token (the key) and Accept: application/json.
 *
 * Fixed value lists. Brave validates `search_lang`, `country` and `ui_lang`
 * against fixed lists and answers anything else with a 422 (below). The lists
 * are those of Brave's API reference ("codes" pages of web search), as
 * enumerated in Brave's own MCP server (brave/brave-search-mcp-server,
 * src/tools/web/params.ts) and in the n8n Brave Search node
 * (msoukhomlinov/n8n-nodes-brave-search, operations/web/data.ts). Its
 * languages have `pt-br` and `pt-pt` but no `pt`, `jp` but no `ja`, `nb` but
 * no `no`, `zh-hans` and `zh-hant` but no `zh`; a 422 for `zh` is on record in
 * the OpenClaw project's issues (openclaw/openclaw #37260, mf-yang/openclaw-cn
 * #64). Newer copies of the list add `el`; older ones lack it, so `el` is
 * not sent. `lang` is mapped to the list (braveSearchLang); a language Brave
 * does not have is not sent at all (Brave then uses its default, `en`).
 * `country` takes the region of `lang` when Brave lists it (`pt-br` -> BR),
 * else the country of the seven languages that have an obvious one, in the
 * upper case of the reference's list. `ui_lang` is not sent.
 *
 * Refusals: HTTP 422 {"type": "ErrorResponse", "error": {"id", "status": 422,
 * "code": "VALIDATION", "detail": "Unable to validate request parameter(s)",
 * "meta": {"errors": [{"type": "enum", "loc": ["query", "search_lang"],
 * "msg": "Input should be 'ar', … or 'vi'", "input": "zh"}]}}, "time"} (the
 * body quoted in openclaw/openclaw #37260 and #18795); a bad key is 422
 * SUBSCRIPTION_TOKEN_INVALID and a missing one 422 VALIDATION with loc
 * ["header", "x-subscription-token"]: those are failures, not refusals.
 */

/** Request headers of every Brave Search API call. */
export function braveHeaders(token: string): Record<string, string> {
  return { Accept: 'application/json', 'X-Subscription-Token': token };
}

/** Brave's `search_lang` values (see the header comment for where the list comes from). */
export const BRAVE_SEARCH_LANGS: ReadonlySet<string> = new Set([
  'ar',
  'eu',
  'bn',
  'bg',
  'ca',
  'zh-hans',
  'zh-hant',
  'hr',
  'cs',
  'da',
  'nl',
  'en',
  'en-gb',
  'et',
  'fi',
  'fr',
  'gl',
  'de',
  'gu',
  'he',
  'hi',
  'hu',
  'is',
  'it',
  'jp',
  'kn',
  'ko',
  'lv',
  'lt',
  'ms',
  'ml',
  'mr',
  'nb',
  'pl',
  'pt-br',
  'pt-pt',
  'pa',
  'ro',
  'ru',
  'sr',
  'sk',
  'sl',
  'es',
  'sv',
  'ta',
  'te',
  'th',
  'tr',
  'uk',
  'vi',
]);

/** Brave's `country` values (ALL aside). */
export const BRAVE_COUNTRIES: ReadonlySet<string> = new Set([
  'AR',
  'AU',
  'AT',
  'BE',
  'BR',
  'CA',
  'CL',
  'DK',
  'FI',
  'FR',
  'DE',
  'HK',
  'IN',
  'ID',
  'IT',
  'JP',
  'KR',
  'MY',
  'MX',
  'NL',
  'NZ',
  'NO',
  'CN',
  'PL',
  'PT',
  'PH',
  'RU',
  'SA',
  'ZA',
  'ES',
  'SE',
  'CH',
  'TW',
  'TR',
  'GB',
  'US',
]);

/** `lang` -> Brave's `country` when `lang` names no region (only these languages have an obvious country). */
export const BRAVE_COUNTRY: Readonly<Record<string, string>> = {
  en: 'US',
  fr: 'FR',
  de: 'DE',
  es: 'ES',
  it: 'IT',
  pt: 'PT',
  nl: 'NL',
};

const TRADITIONAL_CHINESE_REGIONS: ReadonlySet<string> = new Set(['tw', 'hk', 'mo']);

/** `lang` as one of Brave's `search_lang` values, or '' when Brave has no such language. */
export function braveSearchLang(lang: string): string {
  const tag = lang.toLowerCase().replace(/_/g, '-');
  if (BRAVE_SEARCH_LANGS.has(tag)) return tag;
  const { language, script, region } = langParts(tag);
  switch (language) {
    case 'pt':
      return region === 'br' ? 'pt-br' : 'pt-pt';
    case 'zh':
      return script === 'hant' || (script !== 'hans' && TRADITIONAL_CHINESE_REGIONS.has(region))
        ? 'zh-hant'
        : 'zh-hans';
    case 'ja':
      return 'jp';
    case 'no':
      return 'nb';
    case 'iw':
      return 'he';
    case 'en':
      return region === 'gb' || region === 'uk' ? 'en-gb' : 'en';
    default:
      return BRAVE_SEARCH_LANGS.has(language) ? language : '';
  }
}

/** `lang` as one of Brave's `country` values: its region when Brave lists it, else its language's country, else ''. */
export function braveCountry(lang: string): string {
  const { language, region } = langParts(lang);
  const fromRegion = region === 'uk' ? 'GB' : region.toUpperCase();
  if (BRAVE_COUNTRIES.has(fromRegion)) return fromRegion;
  return Object.hasOwn(BRAVE_COUNTRY, language) ? BRAVE_COUNTRY[language]! : '';
}

/** `search_lang` and `country` from `lang`, each only when Brave has a value for it. */
export function braveLanguageParams(params: URLSearchParams, lang: string): void {
  if (!lang) return;
  const searchLang = braveSearchLang(lang);
  if (searchLang) params.set('search_lang', searchLang);
  const country = braveCountry(lang);
  if (country) params.set('country', country);
}

/** `date` → Brave's `freshness`. */
export const FRESHNESS: Readonly<Record<Exclude<DateFilter, ''>, string>> = { d: 'pd', w: 'pw', m: 'pm', y: 'py' };

/** Brave refuses (422) a `q` of more than 400 characters or 50 words (upstreams.md section 1). */
export const BRAVE_MAX_QUERY_CHARS = 400;
export const BRAVE_MAX_QUERY_WORDS = 50;

/** Brave's `offset` is a page index from 0 to 9: it serves ten pages of a query, no more. */
export const BRAVE_MAX_PAGE = 10;

/**
 * Whether Brave takes this query. A longer one is not sent at all (Brave sits
 * the query out, like Staan and Pixabay for theirs): the refusal would only
 * answer the client 502 and record Brave down because of what a client typed.
 */
export function braveAcceptsQuery(q: string): boolean {
  if (q.length > BRAVE_MAX_QUERY_CHARS && [...q].length > BRAVE_MAX_QUERY_CHARS) return false;
  return q.split(/\s+/u).filter(Boolean).length <= BRAVE_MAX_QUERY_WORDS;
}

/** Where each query parameter Brave may refuse comes from: the caller's own value, or Sift's mapping of one. */
const BRAVE_PARAMETERS: Readonly<Record<string, { cause: Refusal['cause']; parameter: string; message: string }>> = {
  q: { cause: 'caller', parameter: 'q', message: 'The query is not one this provider accepts.' },
  offset: { cause: 'caller', parameter: 'page', message: 'Past the last page this provider serves for a query.' },
  search_lang: { cause: 'mapping', parameter: 'lang', message: 'Language not accepted by this provider.' },
  country: { cause: 'mapping', parameter: 'lang', message: 'Country not accepted by this provider.' },
  ui_lang: { cause: 'mapping', parameter: 'lang', message: 'Interface language not accepted by this provider.' },
  count: { cause: 'mapping', parameter: 'page', message: 'Result count not accepted by this provider.' },
  safesearch: { cause: 'mapping', parameter: 'safe', message: 'Safe search value not accepted by this provider.' },
  freshness: { cause: 'mapping', parameter: 'date', message: 'Date filter not accepted by this provider.' },
};

const QUERY_LOC = /"loc"\s*:\s*\[\s*"query"\s*,\s*"([A-Za-z_]+)"/;

/**
 * The refusal of a Brave 422 VALIDATION answer naming a query parameter (meta.errors[].loc), read
 * from the text so that a body cut short still says which; `sent` is the request's query string.
 */
export function braveRefusal(status: number, body: string, sent: URLSearchParams): Refusal | null {
  if (status !== 422 || !/"VALIDATION"|Unable to validate request parameter/.test(body)) return null;
  const name = QUERY_LOC.exec(body)?.[1];
  if (!name || !Object.hasOwn(BRAVE_PARAMETERS, name)) return null;
  const origin = BRAVE_PARAMETERS[name]!;
  return { ...origin, upstreamParameter: name, value: origin.cause === 'mapping' ? (sent.get(name) ?? '') : '' };
}
