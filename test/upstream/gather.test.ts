import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unresponsiveOf } from '../../src/upstream/runner.js';
import type { ProviderCall, ProviderFlow } from '../../src/providers/types.js';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * app.upstream.gather / call: the runner's fan-out, per-provider cache, request
 * deadline and multi-step flows, against a real HTTP fake and real Postgres.
 * Keyless providers (provider_06, provider_08, provider_12) are always configured.
 */

const SECRET = 'mojeek-secret-123456';

let db: TestDatabase;
let fake: FakeServer;
let t: TestApp;
let tokens = 0;
let validToken = '';

const rows = (b: unknown) => (b as { rows: unknown[] }).rows;
function echo(provider: ProviderCall<unknown>['provider'], path: string, extra: Partial<ProviderCall<unknown[]>> = {}) {
  return { provider, request: { url: `${fake.url}${path}` }, parse: rows, ...extra } satisfies ProviderCall<unknown[]>;
}

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startFakeServer({
    '/rows': (req) => ({ body: { rows: [req.query.get('q'), req.body] } }),
    '/hang': () => new Promise(() => {}),
    '/broken': () => ({ status: 500, body: { error: 'boom' } }),
    'POST /login': () => {
      tokens++;
      validToken = `token-${tokens}`;
      return { body: { data: { token: validToken } } };
    },
    '/search': (req) =>
      req.headers.authorization === `Bearer ${validToken}`
        ? { body: { rows: [`found ${req.query.get('q')}`] } }
        : { status: 401, body: { status: 'failure', message: 'Unauthorized' } },
  });
  t = await buildTestApp(db, { MOJEEK_API_KEY: SECRET, MOJEEK_BASE_URL: fake.url, PROVIDER_TIMEOUT_MS: '5000' });
});

beforeEach(() => {
  fake.requests.length = 0;
  fake.setMode({ kind: 'normal' });
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
  await db?.drop();
});

describe('gather', () => {
  it('runs every task and returns the outcomes in task order, failures included, without rejecting', async () => {
    const out = await t.app.upstream.gather([
      echo('provider_06', '/rows?q=a&n=1'),
      echo('provider_12', '/broken?n=1'),
      echo('provider_08', '/rows?q=b&n=1'),
    ]);
    expect(out.map((o) => [o.provider, o.ok])).toEqual([
      ['provider_06', true],
      ['provider_12', false],
      ['provider_08', true],
    ]);
    expect(out[0]).toMatchObject({ ok: true, value: ['a', ''] });
    expect(unresponsiveOf(out)).toEqual([{ engine: 'provider_12', reason: 'error' }]);
  });

  it('maps a parser that throws to a bad-response failure', async () => {
    const [o] = await t.app.upstream.gather([
      echo('provider_06', '/rows?q=c&n=2', {
        parse: () => {
          throw new Error('nope');
        },
      }),
    ]);
    expect(o?.ok).toBe(false);
    if (o && !o.ok) expect(o.error.kind).toBe('bad_response');
  });

  it('refuses a provider this instance has not configured, without calling it', async () => {
    const [o] = await t.app.upstream.gather([echo('provider_05', '/rows?q=pixabay')]);
    expect(o).toMatchObject({ provider: 'provider_05', ok: false });
    if (o && !o.ok) expect(o.error.kind).toBe('not_configured');
    expect(fake.requests).toHaveLength(0);
  });

  it('cancels what still runs at the request deadline and reports it as a timeout, keeping the others', async () => {
    const out = await t.app.upstream.gather([echo('provider_06', '/hang?n=1'), echo('provider_12', '/rows?q=d&n=3')], {
      deadlineMs: 300,
    });
    expect(out[0]).toMatchObject({ provider: 'provider_06', ok: false });
    if (out[0] && !out[0].ok) expect(out[0].error.reason).toBe('timeout');
    // The request deadline cut it, not the hung call's own timeout (5 s), which says so in other words.
    if (out[0] && !out[0].ok) expect(out[0].error.message).toBe('request deadline passed');
    expect(out[1]).toMatchObject({ provider: 'provider_12', ok: true, value: ['d', ''] });
    await t.app.health.recorder.flush();
    const { rows: r } = await db.pool.query("SELECT ok FROM provider_status WHERE provider = 'provider_06'");
    expect(r[0]?.ok).toBe(false);
  });
});

describe('the per-provider cache', () => {
  it('serves a repeated call from the cache without asking the upstream again', async () => {
    const call = echo('provider_06', '/rows?q=cached');
    const first = await t.app.upstream.gather([call]);
    const second = await t.app.upstream.gather([call]);
    expect(second).toEqual(first);
    expect(fake.requests).toHaveLength(1);
  });

  it('keys on the method and body too: two POSTs with different bodies are two entries', async () => {
    const post = (body: string) =>
      echo('provider_06', '/rows?q=post', { request: { method: 'POST', url: `${fake.url}/rows?q=post`, body } });
    expect((await t.app.upstream.call(post('one')))[1]).toBe('one');
    expect((await t.app.upstream.call(post('two')))[1]).toBe('two');
    expect((await t.app.upstream.call(post('one')))[1]).toBe('one');
    expect(fake.requests).toHaveLength(2);
  });

  it('never caches a failure', async () => {
    const call = echo('provider_06', '/rows?q=flaky');
    fake.setMode({ kind: 'status', status: 503 });
    expect((await t.app.upstream.gather([call]))[0]?.ok).toBe(false);
    fake.setMode({ kind: 'normal' });
    expect((await t.app.upstream.gather([call]))[0]?.ok).toBe(true);
    expect(fake.requests).toHaveLength(2);
  });

  it('keeps no secret in its keys: a credential in the URL is masked', async () => {
    const url = `${fake.url}/rows?q=secret&api_key=${SECRET}`;
    await t.app.upstream.call({ provider: 'provider_02', request: { url }, parse: rows });
    expect(t.app.searchCache.has(`provider_02 GET ${url.replace(SECRET, '*')}`)).toBe(true);
    expect(t.app.searchCache.has(`provider_02 GET ${url}`)).toBe(false);
  });

  it('stores nothing for a call with cacheTtlMs 0', async () => {
    const call = echo('provider_06', '/rows?q=uncached', { cacheTtlMs: 0 });
    await t.app.upstream.call(call);
    await t.app.upstream.call(call);
    expect(fake.requests).toHaveLength(2);
  });
});

describe('flows', () => {
  /** Login (token memoised), then search; one re-login when the upstream refuses the token. */
  function searchFlow(q: string): ProviderFlow<unknown[]> {
    const login = (): ProviderCall<string> => ({
      provider: 'provider_12',
      request: { method: 'POST', url: `${fake.url}/login`, body: '{}' },
      parse: (b) => (b as { data: { token: string } }).data.token,
    });
    const search = (token: string): ProviderCall<unknown[]> => ({
      provider: 'provider_12',
      request: { url: `${fake.url}/search?q=${q}`, headers: { Authorization: `Bearer ${token}` } },
      parse: rows,
    });
    return {
      provider: 'provider_12',
      key: `search ${q}`,
      async run(steps) {
        const token = await steps.memo('token', 60_000, () => steps.call(login()));
        try {
          return await steps.call(search(token));
        } catch (err) {
          if ((err as { status?: number }).status !== 401) throw err;
          steps.forget('token');
          return steps.call(search(await steps.memo('token', 60_000, () => steps.call(login()))));
        }
      },
    };
  }

  it('runs the steps in order, keeps the token across requests and caches the final value', async () => {
    const before = tokens;
    expect(await t.app.upstream.call(searchFlow('one'))).toEqual(['found one']);
    expect(await t.app.upstream.call(searchFlow('two'))).toEqual(['found two']);
    expect(await t.app.upstream.call(searchFlow('one'))).toEqual(['found one']);
    expect(tokens - before).toBeLessThanOrEqual(1);
    expect(fake.requests.filter((r) => r.path === '/search')).toHaveLength(2);
  });

  it('logs in again once when the upstream refuses the cached token', async () => {
    await t.app.upstream.call(searchFlow('warm'));
    validToken = 'expired-elsewhere';
    const before = tokens;
    expect(await t.app.upstream.call(searchFlow('after expiry'))).toEqual(['found after expiry']);
    expect(tokens - before).toBe(1);
  });

  it('reports a failing step as the flow provider failure inside gather', async () => {
    fake.setMode({ kind: 'status', status: 500 }, '/login');
    t.app.searchCache.clear();
    const [o] = await t.app.upstream.gather([searchFlow('down')]);
    expect(o).toMatchObject({ provider: 'provider_12', ok: false });
    if (o && !o.ok) expect(o.error.kind).toBe('http_status');
    fake.setMode({ kind: 'normal' }, '/login');
  });
});
