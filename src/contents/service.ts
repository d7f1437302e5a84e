import type { ExtractedPage, Extractor } from './extract/index.js';
import { ExtractionFailure, ExtractorBusy, truncateContent } from './extract/index.js';
import type { AddressPolicy } from './fetch/address-policy.js';
import type { FetchedPage, PageFetcher } from './fetch/page-fetcher.js';
import { ContentsFailure } from './fetch/reasons.js';
import { parseContentsUrl } from './fetch/url.js';
import type { HostSlots } from './host-slots.js';
import type { ContentsFailureEntry, ContentsFormat, ContentsPage } from './page.js';

/*
 * Reading a page for a client, in order: check the URL (the caller's 400s), look in the cache
 * (a page already read by any process of the deployment, for CONTENTS_CACHE_SECONDS), take one of
 * the site's fetch slots (at most CONTENTS_HOST_CONCURRENCY per host across the deployment), fetch
 * it safely (fetch/), extract its main content in a worker thread (extract/), cache the whole
 * content, and cut it to the caller's `max_chars`. Identical reads in flight are made once (the
 * cache's single flight). Never rejects but with ExtractorBusy (the worker pool is full: the
 * route answers 503): every other failure is a ContentsFailureEntry.
 */

export interface ReadOptions {
  format: ContentsFormat;
  maxChars: number;
  /** Bypass the cache (the page read now is cached for the next reads). */
  fresh: boolean;
  signal?: AbortSignal;
}

export type ReadResult = { ok: true; page: ContentsPage } | { ok: false; failure: ContentsFailureEntry };

/** The whole extracted page as cached (JSON: it may be shared through the database). */
export interface CachedPage extends ExtractedPage {
  finalUrl: string;
  contentType: string;
  fetchedAt: string;
}

export interface PageCache {
  /** The cached value of `key`, or the one `fetch` gives (cached for the TTL); `fresh` skips the lookup. */
  getOrFetch(key: string, fresh: boolean, fetch: () => Promise<CachedPage>): Promise<CachedPage>;
}

export interface ContentsServiceDeps {
  fetcher: PageFetcher;
  extractor: Extractor;
  policy: AddressPolicy;
  hostSlots: HostSlots;
  cache: PageCache;
  /** The bound of one read, fetch and extraction together (CONTENTS_TIMEOUT_SECONDS). */
  timeoutMs: number;
  log?: { warn(obj: unknown, msg?: string): void };
}

export interface ContentsService {
  read(url: string, options: ReadOptions): Promise<ReadResult>;
}

/** A cache key: the format and the URL as the WHATWG parser writes it (fragment dropped). */
function cacheKey(format: ContentsFormat, url: URL): string {
  const u = new URL(url.href);
  u.hash = '';
  return `contents ${format} ${u.href}`;
}

/** A date as ISO 8601 UTC (`…Z`, as every time Sift answers), or "" when it is none. */
function utc(date: string): string {
  if (date === '') return '';
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString();
}

function failureOf(url: string, err: unknown): ContentsFailureEntry {
  if (err instanceof ContentsFailure) {
    return err.status === undefined
      ? { url, reason: err.reason, detail: err.detail }
      : { url, reason: err.reason, detail: err.detail, status: err.status };
  }
  if (err instanceof ExtractionFailure) return { url, reason: 'no_content', detail: err.message };
  return { url, reason: 'no_content', detail: 'the page could not be read' };
}

/** Failures that are neither the site's nor the page's: logged, and answered as no_content. */
const unexpected = (err: unknown) => !(err instanceof ContentsFailure) && !(err instanceof ExtractionFailure);

export function createContentsService(deps: ContentsServiceDeps): ContentsService {
  async function fetchAndExtract(url: URL, format: ContentsFormat, signal: AbortSignal): Promise<CachedPage> {
    const release = await deps.hostSlots.acquire(url.hostname, signal);
    let fetched: FetchedPage;
    try {
      fetched = await deps.fetcher.fetch(url.href, { signal });
    } finally {
      release();
    }
    const extracted = await deps.extractor.extract(
      { kind: fetched.kind, text: fetched.text, bytes: fetched.bytes, url: fetched.finalUrl, format },
      { signal },
    );
    return {
      ...extracted,
      finalUrl: fetched.finalUrl,
      contentType: fetched.contentType,
      fetchedAt: fetched.fetchedAt.toISOString(),
    };
  }

  async function read(raw: string, options: ReadOptions): Promise<ReadResult> {
    let url: URL;
    try {
      url = parseContentsUrl(raw, deps.policy);
    } catch (err) {
      return { ok: false, failure: failureOf(raw, err) };
    }
    const deadline = AbortSignal.timeout(deps.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    let fetchedNow = false;
    try {
      const page = await deps.cache.getOrFetch(cacheKey(options.format, url), options.fresh, () => {
        fetchedNow = true;
        return fetchAndExtract(url, options.format, signal);
      });
      const { content, truncated } = truncateContent(page.content, options.maxChars);
      return {
        ok: true,
        page: {
          url: raw,
          final_url: page.finalUrl,
          canonical_url: page.canonicalUrl,
          title: page.title,
          byline: page.byline,
          site_name: page.siteName,
          published: utc(page.published),
          language: page.language,
          excerpt: page.excerpt,
          content_type: page.contentType,
          format: options.format,
          content,
          length: page.content.length,
          truncated,
          fetched_at: page.fetchedAt,
          cached: !fetchedNow,
        },
      };
    } catch (err) {
      if (err instanceof ExtractorBusy) throw err;
      if (signal.aborted && !(err instanceof ContentsFailure)) {
        return { ok: false, failure: { url: raw, reason: 'timeout', detail: 'the page was not read in time' } };
      }
      if (unexpected(err)) deps.log?.warn({ err }, 'contents: a page read failed unexpectedly');
      return { ok: false, failure: failureOf(raw, err) };
    }
  }

  return { read };
}
