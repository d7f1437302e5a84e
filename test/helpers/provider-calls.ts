import type { WebQuery } from '../../src/contracts/search.js';

/** A normalized web or media query for `q`: page 1, safe search on, no language or date, then `over`. */
export const normalizedQuery = (q: string, over: Partial<WebQuery> = {}): WebQuery => ({
  q,
  page: 1,
  safe: true,
  lang: '',
  date: '',
  ...over,
});

/** The query string of a request an adapter built, as an object. */
export const params = (url: string) => Object.fromEntries(new URL(url).searchParams);
