import { LRUCache } from 'lru-cache';

/*
 * The in-process response cache of upstream result slices (docs/architecture.md,
 * Processes and instances: per-instance, only for data where staleness is harmless).
 *
 * - Keyed by everything that changes the upstream request: the runner uses
 *   the provider slug, method, exact request URL and body (query, page,
 *   safe, language, date as mapped for that upstream, the base URL), with
 *   configured secrets masked out, so two requests share an entry exactly
 *   when the upstream would be asked the same thing and no key holds a secret.
 * - Bounded in memory (SEARCH_CACHE_MAX_MB, by an estimate of each value's
 *   size), least recently used entries evicted first, a TTL per entry (the
 *   upstream's terms: Brave 60 s, the others 1 h).
 * - Only successes are stored; a failure is never cached.
 * - Concurrent misses for one key share a single upstream call.
 */

/** How one getOrFetch treats its key. */
export interface LookupOptions {
  /** Keep the value fetched (default true); false: a value is only found, never stored. */
  store?: boolean;
  /** Told at once whether the value comes without a fetch of its own (found, or the key's call in flight). */
  onLookup?: (saved: boolean) => void;
}

export interface SearchCache {
  /**
   * The cached value for `key`, or the result of `fetch()` (stored for `ttlMs`
   * when it resolves, unless `options.store` is false; a rejection is passed on
   * and nothing is stored). `size` estimates a value's memory in bytes.
   */
  getOrFetch<T>(
    key: string,
    ttlMs: number,
    size: (value: T) => number,
    fetch: () => Promise<T>,
    options?: LookupOptions,
  ): Promise<T>;
  /** Whether `key` holds a live value (tests, diagnostics). */
  has(key: string): boolean;
  /** Forgets `key` (a login token the upstream refused). */
  delete(key: string): void;
  /** Forgets everything, the shared level's answers included (for this process: see `generation`). */
  clear(): void;
  readonly size: number;
  /** Bumped by clear(): part of the shared level's keys, so a cleared cache sees nothing it shared before. */
  readonly generation: number;
}

interface Boxed {
  value: unknown;
}

export function createSearchCache(maxMegabytes: number): SearchCache {
  const maxSize = Math.max(1, Math.floor(maxMegabytes * 1024 * 1024));
  const lru = new LRUCache<string, Boxed>({
    maxSize,
    // A value larger than the whole cache is simply not stored.
    maxEntrySize: maxSize,
    ttlAutopurge: false,
    // Ages read from performance.now() on each get, not from a time cached by a new timer every millisecond.
    ttlResolution: 0,
    allowStale: false,
    updateAgeOnGet: false,
  });
  const inFlight = new Map<string, Promise<unknown>>();
  let generation = 0;

  return {
    getOrFetch<T>(
      key: string,
      ttlMs: number,
      size: (value: T) => number,
      fetch: () => Promise<T>,
      options?: LookupOptions,
    ): Promise<T> {
      const hit = lru.get(key);
      const pending = hit ? undefined : inFlight.get(key);
      options?.onLookup?.(hit !== undefined || pending !== undefined);
      if (hit) return Promise.resolve(hit.value as T);
      if (pending) return pending as Promise<T>;
      const store = options?.store !== false;
      const promise = fetch().then(
        (value) => {
          inFlight.delete(key);
          if (!store) return value;
          const bytes = Math.max(1, Math.ceil(size(value)) + key.length * 2 + 64);
          if (bytes <= maxSize) lru.set(key, { value }, { ttl: ttlMs, size: bytes });
          return value;
        },
        (err: unknown) => {
          inFlight.delete(key);
          throw err;
        },
      );
      inFlight.set(key, promise);
      return promise;
    },
    has(key) {
      return lru.has(key);
    },
    delete(key) {
      lru.delete(key);
    },
    clear() {
      lru.clear();
      generation++;
    },
    get size() {
      return lru.size;
    },
    get generation() {
      return generation;
    },
  };
}

/** Rough memory footprint of a string in bytes (two per UTF-16 unit, plus a header). */
export function stringBytes(s: string): number {
  return s.length * 2 + 16;
}

/** Rough memory footprint of a parsed JSON-like value in bytes (the default size of cached values). */
export function estimateBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return stringBytes(value);
  if (value === null || typeof value !== 'object' || depth > 32) return 16;
  let n = 32;
  if (Array.isArray(value)) {
    for (const v of value) n += 8 + estimateBytes(v, depth + 1);
    return n;
  }
  for (const k in value) n += 24 + k.length + estimateBytes((value as Record<string, unknown>)[k], depth + 1);
  return n;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process-wide cache of upstream result slices (web, suggest, media). */
    searchCache: SearchCache;
  }
}
