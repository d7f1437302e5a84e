import type { SearchCache } from '../cache.js';

/*
 * Stage 1, cached: an answer this process already has (cache.ts) is served for its TTL, and
 * concurrent misses of one key in this process share the next stage's single result.
 */

export interface CacheEntry<T> {
  key: string;
  ttlMs: number;
  /** Estimated memory of a value, bytes. */
  size: (value: T) => number;
}

export type InProcessStage = <T>(entry: CacheEntry<T>, next: () => Promise<T>) => Promise<T>;

export function inProcessCache(cache: SearchCache | undefined): InProcessStage {
  return (entry, next) => {
    if (!cache || entry.ttlMs <= 0) return next();
    return cache.getOrFetch(entry.key, entry.ttlMs, entry.size, next);
  };
}
