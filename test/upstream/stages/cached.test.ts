import { describe, expect, it } from 'vitest';
import { createSearchCache } from '../../../src/upstream/cache.js';
import { inProcessCache } from '../../../src/upstream/stages/cached.js';

/* Stage 1, cached (src/upstream/stages/cached.ts): this process's answers, one fetch per key. */

const entry = (key: string, ttlMs = 60_000) => ({ key, ttlMs, size: () => 64 });

describe('the cached stage', () => {
  it('serves a key it has from the process, and makes one fetch for concurrent misses of a key', async () => {
    const stage = inProcessCache(createSearchCache(1));
    let fetches = 0;
    const fetch = async () => ++fetches;
    expect(await Promise.all([stage(entry('k'), fetch), stage(entry('k'), fetch)])).toEqual([1, 1]);
    expect(await stage(entry('k'), fetch)).toBe(1);
    expect(await stage(entry('other'), fetch)).toBe(2);
  });

  it('keeps nothing for a TTL of 0, nor without a cache, nor a failure', async () => {
    let fetches = 0;
    const fetch = async () => ++fetches;
    const stage = inProcessCache(createSearchCache(1));
    await stage(entry('k', 0), fetch);
    expect(await stage(entry('k', 0), fetch)).toBe(2);
    const none = inProcessCache(undefined);
    await none(entry('k'), fetch);
    expect(await none(entry('k'), fetch)).toBe(4);
    await expect(stage(entry('f'), () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await stage(entry('f'), fetch)).toBe(5);
  });
});
