import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { callCacheKey } from '../../src/upstream/cache-key.js';
import { createSearchCache } from '../../src/upstream/cache.js';
import { configSecrets, createProviderServices, type ProviderServices } from '../../src/upstream/services.js';
import { PROVIDERS } from '../../src/providers/registry.js';
import type { ProviderCall } from '../../src/providers/types.js';
import type { Config } from '../../src/config/index.js';
import { type MarginaliaFake, startMarginaliaFake } from '../fakes/marginalia.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Cache keys (src/upstream/cache-key.ts) are built from a call's own parameters, the credential
 * parameters its descriptor names left out; nothing is masked by value (doubt 8 of issue 68).
 */

const call = (url: string, body?: string): ProviderCall<unknown> => ({
  provider: 'provider_02',
  request: body === undefined ? { url } : { method: 'POST', url, body },
  parse: (b) => b,
});
const mojeekCredentials = new Set(['api_key']);

describe('a cache key', () => {
  it('leaves out the credential parameters the descriptor names, so two keys share one entry', () => {
    const a = callCacheKey(call('https://api.example/search?q=cats&api_key=first-secret'), mojeekCredentials);
    const b = callCacheKey(call('https://api.example/search?q=cats&api_key=other-secret'), mojeekCredentials);
    expect(a).toBe(b);
    expect(a).not.toContain('secret');
  });

  it('is the same whatever the order of the query parameters, and differs when a value does', () => {
    const key = (u: string) => callCacheKey(call(u), mojeekCredentials);
    expect(key('https://api.example/s?q=cats&page=2')).toBe(key('https://api.example/s?page=2&q=cats'));
    expect(key('https://api.example/s?q=cats&page=2')).not.toBe(key('https://api.example/s?q=cats&page=3'));
    expect(key('https://api.example/s?q=*+library')).not.toBe(key('https://api.example/s?q=public+library'));
  });

  it("keys a JSON body by its fields, in any order, without the credential's field", () => {
    const url = 'https://translate.example/translate';
    const credentials = new Set(['api_key']);
    const one = callCacheKey(call(url, '{"q":"hi","target":"de","api_key":"k-one"}'), credentials);
    const two = callCacheKey(call(url, '{"api_key":"k-two","target":"de","q":"hi"}'), credentials);
    expect(one).toBe(two);
    expect(one).not.toContain('k-one');
    expect(callCacheKey(call(url, '{"q":"hi","target":"fr"}'), credentials)).not.toBe(one);
  });

  it('keeps the method, the path and a plain body apart', () => {
    expect(callCacheKey(call('https://a.example/x?q=1'))).not.toBe(callCacheKey(call('https://a.example/y?q=1')));
    expect(callCacheKey(call('https://a.example/x', 'one'))).not.toBe(callCacheKey(call('https://a.example/x', 'two')));
    expect(callCacheKey(call('https://a.example/x', 'one'))).not.toBe(callCacheKey(call('https://a.example/x')));
  });
});

describe("every provider's calls", () => {
  it('key without any configured credential, whatever the call and wherever the credential goes', () => {
    const base = parseConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x' });
    const credentialVariables = (Object.keys(base) as (keyof Config)[]).filter((k) =>
      /(_API_KEY|_PIN|_TOKEN)$/.test(k),
    );
    const env: Record<string, string> = { DATABASE_URL: 'postgres://x@127.0.0.1/x' };
    for (const k of credentialVariables) env[k] = `sentinel${k.toLowerCase().replace(/_/g, '')}`;
    const config = parseConfig(env);
    const query = { q: 'cats', page: 2, safe: true, lang: 'en', date: 'w' as const };
    let checked = 0;
    for (const p of PROVIDERS) {
      const credentials = new Set(p.credentialParameters ?? []);
      const calls = [
        p.calls?.web?.call(query, config),
        p.calls?.suggest?.('cats', config),
        p.calls?.images?.(query, config),
        p.calls?.news?.(query, config),
        p.calls?.videos?.(query, config),
        p.probe?.(config),
      ];
      for (const call of calls) {
        if (!call) continue;
        checked++;
        const key = callCacheKey(call, credentials);
        expect(key, `${p.slug} ${call.request.url}`).not.toMatch(/sentinel/);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });
});

describe("Marginalia's public key", () => {
  let db: TestDatabase;
  let fake: MarginaliaFake;
  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startMarginaliaFake();
  });
  afterAll(async () => {
    await fake?.close();
    await db?.drop();
  });
  beforeEach(async () => {
    fake.requests.length = 0;
    await db.pool.query('TRUNCATE upstream_cache, upstream_flights');
  });

  /** A worker of a server with two, Marginalia keyed with its public key. */
  function processOf(): ProviderServices {
    const config = parseConfig({
      DATABASE_URL: db.url,
      MARGINALIA_API_KEY: 'public',
      MARGINALIA_BASE_URL: fake.baseUrl,
      LOG_LEVEL: 'silent',
      WORKERS: '2',
    });
    return createProviderServices(config, db.pool, { cache: createSearchCache(4), shareCache: true });
  }
  const search = (q: string): ProviderCall<string[]> => ({
    provider: 'provider_03',
    request: {
      url: `${fake.baseUrl}/search?query=${encodeURIComponent(q).replace(/%20/g, '+')}&count=10`,
      headers: { Accept: 'application/json', 'API-Key': 'public' },
    },
    parse: (b) => (b as { results: { title: string }[] }).results.map((r) => r.title),
  });

  it('is no secret: it is neither masked out of keys nor kept out of answers', () => {
    const config = parseConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', MARGINALIA_API_KEY: 'public' });
    expect(configSecrets(config)).not.toContain('public');
  });

  it('does not make `* library X` share the answer of `public library X`', async () => {
    fake.setResults('public library X', [{ url: 'https://a.example/', title: 'the public library' }]);
    fake.setResults('* library X', [{ url: 'https://b.example/', title: 'any library' }]);
    const a = processOf();
    try {
      expect(await a.runner.call(search('public library X'))).toEqual(['the public library']);
      expect(await a.runner.call(search('* library X'))).toEqual(['any library']);
      expect(fake.requests).toHaveLength(2);
    } finally {
      await a.close();
    }
  });

  it('shares an answer whose JSON holds the word "public" with the other processes', async () => {
    fake.setResults('public domain books', [{ url: 'https://c.example/', title: 'public domain books' }]);
    const a = processOf();
    const b = processOf();
    try {
      await a.runner.call(search('public domain books'));
      await a.shared!.settled();
      expect(await b.runner.call(search('public domain books'))).toEqual(['public domain books']);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
