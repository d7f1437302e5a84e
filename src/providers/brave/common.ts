import type { DateFilter } from '../../search/params.js';

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
