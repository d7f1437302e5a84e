/*
 * Safe fetching of pages for their contents (issue 64): the URL rules, the address policy and the
 * fetcher. Extraction (HTML and PDF to text) is elsewhere; this module hands it bytes and text.
 */
export { type AddressPolicy, addressPolicy } from './address-policy.js';
export { createPageFetcher, type FetchedPage, type PageFetcher, type PageFetcherOptions } from './page-fetcher.js';
export { type ContentsReason, ContentsFailure } from './reasons.js';
export { parseContentsUrl } from './url.js';
