import type { SearchCache } from '../cache.js';
import type { SharingPolicy } from '../shared-policy.js';
import type { ProviderSlug } from '../../providers/types.js';

/*
 * Stage 1, cached: an answer this process already has (cache.ts) is served for its TTL, and
 * concurrent misses of one key in this process share the next stage's single result.
 *
 * An answer is kept only where keeping pays (shared-policy.ts, the rule of the shared level too):
 * keeping every answer of a provider whose searches never repeat (distinct queries) fills the cache
 * with values no one asks for again, which outlive the young generation of the heap and so cost
 * the collector most. A provider's answers are all kept while a tenth of its lookups find one, else
 * a sample of its keys, which keeps measuring; providers something limits are always kept. Every
 * key is looked up whatever the policy: a lookup costs no more than a Map's.
 */

export interface CacheEntry<T> {
  key: string;
  ttlMs: number;
  /** Estimated memory of a value, bytes. */
  size: (value: T) => number;
  /** The provider whose answer it is, kept as the policy says; none: always kept (a flow's memo). */
  provider?: ProviderSlug;
}

export type InProcessStage = <T>(entry: CacheEntry<T>, next: () => Promise<T>) => Promise<T>;

export function inProcessCache(cache: SearchCache | undefined, policy?: SharingPolicy): InProcessStage {
  return (entry, next) => {
    if (!cache || entry.ttlMs <= 0) return next();
    const { provider } = entry;
    if (!policy || provider === undefined) return cache.getOrFetch(entry.key, entry.ttlMs, entry.size, next);
    if (policy.uses(provider, keySample(entry.key))) {
      return cache.getOrFetch(entry.key, entry.ttlMs, entry.size, next, {
        onLookup: (saved) => policy.note(provider, saved),
      });
    }
    return cache.getOrFetch(entry.key, entry.ttlMs, entry.size, next, { store: false });
  };
}

/** 16 bits of the key's FNV-1a hash: which keys are the sample, the same in every process. */
function keySample(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h ^ (h >>> 16)) & 0xffff;
}
