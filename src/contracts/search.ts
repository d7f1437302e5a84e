/*
 * The neutral vocabulary of searches: normalized queries (what a feature
 * hands an adapter) and normalized results (what an adapter hands back).
 * Both src/providers/ (adapters) and src/search/ (features) import it; it
 * imports neither, so the two folders never reach into each other.
 */

/** `date` filter of the search endpoints (spec 4.1): day, week, month, year, or none. */
export type DateFilter = '' | 'd' | 'w' | 'm' | 'y';

/** What a web engine adapter needs to build its request (the normalized parameters). */
export interface WebQuery {
  q: string;
  page: number;
  safe: boolean;
  lang: string;
  date: DateFilter;
}

/** Images, news and videos take the same normalized parameters as web search. */
export type MediaQuery = WebQuery;

/** One web result as an engine adapter normalizes it (every field present). */
export interface EngineResult {
  title: string;
  url: string;
  description: string;
  display_url: string;
  favicon_url: string;
  age: string;
  /** When the page was published, as the upstream dates it: ISO 8601 UTC ("2024-03-03T10:12:00Z"), or "". */
  published: string;
  sitelinks: unknown[];
}

/** One web engine's answer for one page. */
export interface EngineSlice {
  results: EngineResult[];
  /** The corrected query the engine actually searched (provider_01 only), or "". */
  altered: string;
}

/** Image result (spec 2.2). */
export interface ImageResult {
  title: string;
  /** The page the image is on. */
  url: string;
  /** Host name of that page. */
  source: string;
  thumbnail: string;
}

/** News result (spec 2.4). */
export interface NewsResult {
  title: string;
  url: string;
  description: string;
  age: string;
  /** ISO 8601 UTC publication time from the upstream, or "". */
  published: string;
  source: string;
  hostname: string;
  thumbnail: string;
}

/** Video result (spec 2.5). */
export interface VideoResult {
  title: string;
  url: string;
  age: string;
  /** ISO 8601 UTC publication time from the upstream, or "". */
  published: string;
  source: string;
  duration: string;
  hostname: string;
  thumbnail: string;
  /** The player page to embed in an iframe (the upstream's own, or the platform's for its watch URL), or "". */
  embed_url: string;
}
