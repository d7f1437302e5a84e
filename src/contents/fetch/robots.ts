import { LRUCache } from 'lru-cache';
import robotsParserModule from 'robots-parser';
import { deadline } from './deadline.js';
import { ContentsFailure } from './reasons.js';

/*
 * robots.txt for Sift's user agent (RFC 9309, read by robots-parser: the group of Sift's product
 * token, else `*`; the longest matching rule wins, Allow on a tie). Fetched through the same safe
 * path as pages and kept per origin for a while. What an answer means (RFC 9309, 2.3.1):
 * - 2xx: its rules (the first 512 KiB of them; the RFC asks for at least 500 KiB);
 * - 4xx, or no file to be had (more than five redirects, a redirect to an address that is never
 *   fetched): everything is allowed;
 * - 5xx: nothing is allowed. We follow the RFC here rather than allow: a site answering its
 *   robots.txt with a server error gives no sign of consent. Such a verdict is kept for a few
 *   minutes only, so a site that recovers is readable again soon.
 * - a timeout or an unreachable host: no verdict; the page's fetch fails for that same reason
 *   (its host is the one that could not be reached).
 * Fetches of one origin's pages that start together share one robots.txt fetch, bounded by its own
 * time cap, so one caller giving up does not fail the others.
 */

// robots-parser's types declare an ES default export; the package is a CommonJS function, which Node
// hands an ES import as its default.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** The RFC's parsing limit, rounded up. */
export const ROBOTS_MAX_BYTES = 512 * 1024;
const SERVER_ERROR_TTL_MS = 5 * 60_000;
const MAX_ORIGINS = 2000;

export interface RobotsAnswer {
  status: number;
  /** The body of a 2xx answer. */
  text?: string;
}

export interface RobotsOptions {
  userAgent: string;
  /** Fetches an origin's robots.txt (redirects followed); rejects with a ContentsFailure. */
  fetchRobotsTxt(url: URL, signal: AbortSignal): Promise<RobotsAnswer>;
  /** The time cap of one robots.txt fetch. */
  timeoutMs: number;
  ttlMs: number;
  now: () => number;
}

type Verdict = { allowAll: true } | { allowAll: false; isAllowed: (url: string) => boolean; why: string };

export interface RobotsRules {
  /** Resolves when robots.txt lets Sift fetch `url`; rejects with robots_disallowed (or the robots fetch's failure). */
  check(url: URL, signal: AbortSignal): Promise<void>;
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function robotsRules(options: RobotsOptions): RobotsRules {
  const cache = new LRUCache<string, { verdict: Verdict; expiresAt: number }>({ max: MAX_ORIGINS });

  const loading = new Map<string, Promise<Verdict>>();

  /** The cached verdict, or the one being loaded, or a new load; abandoned (not cancelled) when `signal` aborts. */
  function verdictFor(origin: string, signal: AbortSignal): Promise<Verdict> {
    const cached = cache.get(origin);
    if (cached && cached.expiresAt > options.now()) return Promise.resolve(cached.verdict);
    let pending = loading.get(origin);
    if (!pending) {
      pending = load(origin).finally(() => loading.delete(origin));
      // A load whose callers all gave up still settles; nobody need hear of it.
      pending.catch(() => {});
      loading.set(origin, pending);
    }
    return untilAborted(pending, signal);
  }

  async function load(origin: string): Promise<Verdict> {
    const limit = deadline(options.timeoutMs, undefined, 'robots.txt');
    try {
      return await loadWithin(origin, limit.signal);
    } finally {
      limit.clear();
    }
  }

  async function loadWithin(origin: string, signal: AbortSignal): Promise<Verdict> {
    const robotsUrl = new URL('/robots.txt', origin);
    let answer: RobotsAnswer;
    try {
      answer = await options.fetchRobotsTxt(robotsUrl, signal);
    } catch (err) {
      const unavailable =
        err instanceof ContentsFailure &&
        (err.reason === 'too_many_redirects' || err.reason === 'blocked_address' || err.reason === 'invalid_url');
      if (!unavailable) throw err;
      answer = { status: 404 };
    }
    let verdict: Verdict;
    let ttl = options.ttlMs;
    if (answer.status >= 200 && answer.status < 300) {
      const robot = robotsParser(robotsUrl.href, answer.text ?? '');
      verdict = {
        allowAll: false,
        isAllowed: (url) => robot.isAllowed(url, options.userAgent) !== false,
        why: 'robots.txt disallows this path for Sift',
      };
    } else if (answer.status >= 500) {
      verdict = {
        allowAll: false,
        isAllowed: () => false,
        why: `robots.txt answered ${answer.status}, which RFC 9309 reads as disallowing everything`,
      };
      ttl = Math.min(ttl, SERVER_ERROR_TTL_MS);
    } else {
      verdict = { allowAll: true };
    }
    cache.set(origin, { verdict, expiresAt: options.now() + ttl });
    return verdict;
  }

  return {
    async check(url, signal) {
      const verdict = await verdictFor(url.origin, signal);
      if (!verdict.allowAll && !verdict.isAllowed(url.href)) {
        throw new ContentsFailure('robots_disallowed', verdict.why);
      }
    },
  };
}
