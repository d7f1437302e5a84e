import type { DateFilter } from '../../contracts/search.js';

/** Request headers of every Brave Search API call. */
export function braveHeaders(token: string): Record<string, string> {
  return { Accept: 'application/json', 'X-Subscription-Token': token };
}

/** `lang` → Brave's `country` (only these languages have an obvious country). */
export const BRAVE_COUNTRY: Readonly<Record<string, string>> = {
  en: 'us',
  fr: 'fr',
  de: 'de',
  es: 'es',
  it: 'it',
  pt: 'pt',
  nl: 'nl',
};

/** `search_lang` when a language is given, plus `country` for the languages above. */
export function braveLanguageParams(params: URLSearchParams, lang: string): void {
  if (!lang) return;
  params.set('search_lang', lang);
  const country = Object.hasOwn(BRAVE_COUNTRY, lang) ? BRAVE_COUNTRY[lang] : undefined;
  if (country) params.set('country', country);
}

/** `date` → Brave's `freshness`. */
export const FRESHNESS: Readonly<Record<Exclude<DateFilter, ''>, string>> = { d: 'pd', w: 'pw', m: 'pm', y: 'py' };

/** Brave refuses (422) a `q` of more than 400 characters or 50 words (upstreams.md section 1). */
export const BRAVE_MAX_QUERY_CHARS = 400;
export const BRAVE_MAX_QUERY_WORDS = 50;

/**
 * Whether Brave takes this query. A longer one is not sent at all (Brave sits
 * the query out, like Staan and Pixabay for theirs): the refusal would only
 * answer the client 502 and record Brave down because of what a client typed.
 */
export function braveAcceptsQuery(q: string): boolean {
  if (q.length > BRAVE_MAX_QUERY_CHARS && [...q].length > BRAVE_MAX_QUERY_CHARS) return false;
  return q.split(/\s+/u).filter(Boolean).length <= BRAVE_MAX_QUERY_WORDS;
}
