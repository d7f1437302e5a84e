import type { SearchCache } from '../cache.js';
import type { SharedCache, WaitBound } from '../shared-cache.js';
import type { ProviderSlug } from '../../providers/types.js';

/*
 * Stage 2, shared: an answer another worker or instance fetched is served from the shared level
 * (shared-cache.ts), and an identical call in flight there is waited for instead of made again,
 * never past the request's deadline. The shared level decides where it pays (see its header).
 * Keys carry the per-process cache's generation, so a cleared cache sees nothing it shared before.
 */

export type SharedStage = <T>(
  provider: ProviderSlug,
  key: string,
  ttlMs: number,
  bound: WaitBound,
  next: () => Promise<T>,
) => Promise<T>;

export function acrossProcesses(shared: SharedCache | undefined, cache: SearchCache | undefined): SharedStage {
  return (provider, key, ttlMs, bound, next) => {
    if (!shared || !cache || ttlMs <= 0) return next();
    return shared.getOrFetch(`${cache.generation} ${key}`, provider, ttlMs, next, bound);
  };
}
