import { describe, expect, it } from 'vitest';
import { createSearchCache } from '../../../src/upstream/cache.js';
import { inProcessCache } from '../../../src/upstream/stages/cached.js';
import { sharingPolicy } from '../../../src/upstream/shared-policy.js';

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

describe("where this process's cache pays", () => {
  const answer = (key: string) => ({ key, ttlMs: 60_000, size: () => 64, provider: 'provider_06' as const });

  it('keeps only a sample of the answers of a provider whose searches never repeat, and all again once they do', async () => {
    const cache = createSearchCache(1);
    const stage = inProcessCache(
      cache,
      sharingPolicy(() => false),
    );
    let fetches = 0;
    const fetch = async () => ++fetches;
    // Distinct queries: nothing found again in 200 lookups.
    for (let i = 0; i < 200; i++) await stage(answer(`distinct ${i}`), fetch);
    expect(cache.size).toBe(200);
    for (let i = 0; i < 1600; i++) await stage(answer(`next ${i}`), fetch);
    // About 1 in 16 of the next 1600 kept.
    expect(cache.size - 200).toBeGreaterThan(40);
    expect(cache.size - 200).toBeLessThan(200);
    // Searches that repeat: the sample's keys are found again, so all are kept again.
    const sample = [...Array(1600).keys()].map((i) => `next ${i}`).filter((k) => cache.has(k));
    for (let round = 0; round < 4; round++) for (const k of sample) await stage(answer(k), fetch);
    const before = fetches;
    await stage(answer('a new one'), fetch);
    expect(await stage(answer('a new one'), fetch)).toBe(before + 1);
  });

  it('always keeps the answers of a provider something limits, and a flow memo, whatever they save', async () => {
    const cache = createSearchCache(1);
    const stage = inProcessCache(
      cache,
      sharingPolicy((p) => p === 'provider_06'),
    );
    const fetch = async () => 1;
    for (let i = 0; i < 1000; i++) await stage(answer(`limited ${i}`), fetch);
    expect(cache.size).toBe(1000);
    const unmeasured = inProcessCache(
      createSearchCache(1),
      sharingPolicy(() => false),
    );
    let logins = 0;
    for (let i = 0; i < 1000; i++)
      await unmeasured({ key: 'memo', ttlMs: 60_000, size: () => 64 }, async () => ++logins);
    expect(logins).toBe(1);
  });

  it('still serves an answer it holds, and shares a call in flight, for keys outside the sample', async () => {
    const cache = createSearchCache(1);
    const policy = sharingPolicy(() => false);
    const stage = inProcessCache(cache, policy);
    let fetches = 0;
    const fetch = async () => ++fetches;
    await stage(answer('kept early'), fetch);
    for (let i = 0; i < 200; i++) await stage(answer(`distinct ${i}`), fetch);
    expect(policy.full('provider_06')).toBe(false);
    expect(await stage(answer('kept early'), fetch)).toBe(1);
    const outside = [...Array(64).keys()].map((i) => `outside ${i}`);
    const results = await Promise.all(outside.flatMap((k) => [stage(answer(k), fetch), stage(answer(k), fetch)]));
    for (let i = 0; i < results.length; i += 2) expect(results[i]).toBe(results[i + 1]);
  });
});
