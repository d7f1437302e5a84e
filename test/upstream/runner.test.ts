import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/providers/types.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.js';

/*
 * app.upstream.call: the path every search takes to an upstream. Outcomes
 * are recorded in provider_status and provider_history; every fault is
 * classified, recorded as a failure, and never hangs the caller.
 */

describe('app.upstream.call', () => {
  let db: TestDatabase;
  let t: TestApp;
  let fake: FakeServer;

  const row = async (provider: string) =>
    (
      await db.pool.query('SELECT ok, source, last_error, last_ok_at FROM provider_status WHERE provider = $1', [
        provider,
      ])
    ).rows[0];

  // Uncached: each test sees the upstream's answer of the moment (the cache has its own tests in gather.test.ts).
  const call = (path = '/res/v1/web/search?q=x', parse = (b: unknown) => b) =>
    t.app.upstream.call({
      provider: 'provider_01',
      request: { url: `${fake.url}${path}`, headers: { 'X-Subscription-Token': 'brave-secret-token' } },
      parse,
      cacheTtlMs: 0,
    });

  async function failsWith(promise: Promise<unknown>): Promise<UpstreamError> {
    const err = await promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    return err as UpstreamError;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startFakeServer({
      'GET /res/v1/web/search': () => ({ body: { web: { results: [{ title: 'a' }] } } }),
      'GET /text': () => ({ body: 'plain words' }),
    });
    t = await buildTestApp(db, {
      BRAVE_API_KEY: 'brave-secret-token',
      BRAVE_BASE_URL: `${fake.url}/res/v1`,
      PROVIDER_TIMEOUT_MS: '400',
      PROBE_INTERVAL_SECONDS: '0',
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await db.drop();
  });
  beforeEach(async () => {
    fake.setMode({ kind: 'normal' });
    await db.pool.query('DELETE FROM provider_status; DELETE FROM provider_history');
  });

  it('returns the parsed value and records the provider up with last_ok_at', async () => {
    const value = await call(
      '/res/v1/web/search?q=x',
      (b) => (b as { web: { results: unknown[] } }).web.results.length,
    );
    expect(value).toBe(1);
    await t.app.health.recorder.flush();
    expect(await row('provider_01')).toMatchObject({ ok: true, source: 'query', last_error: '' });
    expect((await row('provider_01')).last_ok_at).toBeInstanceOf(Date);
    const h = await db.pool.query(`SELECT successes, failures FROM provider_history WHERE provider = 'provider_01'`);
    expect(h.rows).toEqual([{ successes: 1, failures: 0 }]);
  });

  it('passes a text body through when asked for text', async () => {
    const text = await t.app.upstream.call({
      provider: 'provider_01',
      request: { url: `${fake.url}/text` },
      text: true,
      parse: (b) => String(b).toUpperCase(),
    });
    expect(text).toBe('PLAIN WORDS');
  });

  const faults = [
    { name: 'a hung upstream', mode: { kind: 'hang' as const }, kind: 'timeout', reason: 'timeout' },
    { name: 'a body that stalls', mode: { kind: 'stall' as const }, kind: 'timeout', reason: 'timeout' },
    { name: 'a reset connection', mode: { kind: 'reset' as const }, kind: 'network', reason: 'unreachable' },
    { name: 'HTTP 500', mode: { kind: 'status' as const, status: 500 }, kind: 'http_status', reason: 'error' },
    {
      name: 'HTTP 429',
      mode: { kind: 'status' as const, status: 429, body: { type: 'ErrorResponse', error: { code: 'RATE_LIMITED' } } },
      kind: 'rate_limited',
      reason: 'rate_limited',
    },
    { name: 'garbage instead of JSON', mode: { kind: 'garbage' as const }, kind: 'bad_response', reason: 'error' },
    {
      name: 'a huge body',
      mode: { kind: 'huge' as const, bytes: 8 * 1024 * 1024 },
      kind: 'too_large',
      reason: 'error',
    },
  ];

  for (const f of faults) {
    it(`classifies ${f.name} as ${f.kind}, records the provider down, and answers within the timeout`, async () => {
      fake.setMode(f.mode);
      const err = await failsWith(call());
      // A hung or stalled upstream never ends: the call's own timeout did (how soon: the bench's `hung` section).
      if (f.kind === 'timeout') expect(err.message).toMatch(/^no complete answer within \d+ ms$/);
      expect(err.provider).toBe('provider_01');
      expect(err.kind).toBe(f.kind);
      expect(err.reason).toBe(f.reason);
      await t.app.health.recorder.flush();
      const r = await row('provider_01');
      expect(r.ok).toBe(false);
      expect(r.last_error).toBe(err.message);
      expect(r.last_error.length).toBeGreaterThan(0);
      expect(r.last_error).not.toContain('brave-secret-token');
    });
  }

  it('records a 2xx answer of the wrong shape as a bad response', async () => {
    const err = await failsWith(
      call('/res/v1/web/search?q=x', (b) => {
        if (!Array.isArray(b)) throw new Error('expected an array');
        return b;
      }),
    );
    expect(err.kind).toBe('bad_response');
    expect(err.message).toBe('unexpected response shape: expected an array');
    await t.app.health.recorder.flush();
    expect((await row('provider_01')).ok).toBe(false);
  });

  it('keeps a secret sent in the URL out of the recorded error and the thrown message', async () => {
    fake.setMode({ kind: 'status', status: 401, body: 'invalid key api_key=brave-secret-token' });
    const err = await failsWith(call('/res/v1/web/search?q=x&api_key=brave-secret-token'));
    expect(err.message).toBe('HTTP 401: invalid key api_key=[redacted]');
    await t.app.health.recorder.flush();
    expect((await row('provider_01')).last_error).not.toContain('brave-secret-token');
  });

  it('never calls a provider that is not configured, and records nothing for it', async () => {
    const before = fake.requests.length;
    const err = await failsWith(
      t.app.upstream.call({
        provider: 'provider_02',
        request: { url: `${fake.url}/res/v1/web/search` },
        parse: (b) => b,
      }),
    );
    expect(err.kind).toBe('not_configured');
    expect(fake.requests.length).toBe(before);
    await t.app.health.recorder.flush();
    expect(await row('provider_02')).toBeUndefined();
  });

  it('uses 3 s for the web engines and the reference timeouts for the others, unless PROVIDER_TIMEOUT_MS is set', async () => {
    expect(t.app.providers.timeoutMs('provider_01')).toBe(400);
    const d = await buildTestApp(db, { PROBE_INTERVAL_SECONDS: '0' });
    try {
      for (const slug of ['provider_01', 'provider_02', 'provider_03', 'provider_04'] as const) {
        expect(d.app.providers.timeoutMs(slug)).toBe(3000);
      }
      expect(d.app.providers.timeoutMs('provider_08')).toBe(5000);
      expect(d.app.providers.timeoutMs('provider_10')).toBe(8000);
      expect(d.app.providers.timeoutMs('provider_13')).toBe(6000);
      expect(d.app.providers.timeoutMs('translate')).toBe(10_000);
    } finally {
      await d.close();
    }
  });
});
