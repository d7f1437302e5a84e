import { type Server, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import type { ProviderSlug } from '../../src/providers/types.js';
import { type TestApp, buildTestApp, testConfig } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { ALL_PROVIDER_SLUGS } from '../helpers/providers.js';
import { listen } from '../helpers/server.js';

/*
 * The health endpoints for uptime monitors, against a real database:
 * every row of the roll-up and single-provider tables of spec 4.3, the
 * switches of 4.4 and the token rules of 5.2.
 */

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
/** Configured by default (keyless): provider_06, 08, 09, 12, weather, currency, provider_13; plus provider_01 by key. */
const BASE_ENV = { BRAVE_API_KEY: 'brave-test-key' };
const DEFAULT_CONFIGURED = 8;

async function observe(
  app: FastifyInstance,
  provider: ProviderSlug,
  ok: boolean,
  error = 'HTTP 502: upstream says no',
) {
  app.health.recorder.record({ provider, ok, error, latencyMs: 12, source: 'query' });
  await app.health.recorder.flush();
}

function expectMonitorJson(res: { headers: Record<string, unknown> }) {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
}

describe('health roll-up /status/health', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, BASE_ENV);
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });
  afterEach(async () => {
    await db.pool.query('DELETE FROM provider_status');
    t.app.health.reader.invalidate();
  });

  it('answers 200 ok with counts when nothing has been observed yet, on both paths, without a redirect', async () => {
    for (const url of ['/status/health', '/status/health/']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expectMonitorJson(res);
      expect(res.json()).toEqual({
        status: 'ok',
        watched: DEFAULT_CONFIGURED,
        operational: 0,
        down: [],
        unknown: DEFAULT_CONFIGURED,
      });
    }
  });

  it('stays 200 ok when every watched provider is up or not yet observed', async () => {
    await observe(t.app, 'provider_01', true);
    await observe(t.app, 'weather', true);
    const res = await t.app.inject({ url: '/status/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      watched: DEFAULT_CONFIGURED,
      operational: 2,
      down: [],
      unknown: DEFAULT_CONFIGURED - 2,
    });
  });

  it('answers 500 down listing the down slugs in registry order, never the upstream error text', async () => {
    await observe(t.app, 'provider_13', false, 'secret-ish upstream text');
    await observe(t.app, 'provider_01', false, 'secret-ish upstream text');
    await observe(t.app, 'currency', true);
    const res = await t.app.inject({ url: '/status/health' });
    expect(res.statusCode).toBe(500);
    expectMonitorJson(res);
    expect(res.json()).toEqual({
      status: 'down',
      watched: DEFAULT_CONFIGURED,
      operational: 1,
      down: ['provider_01', 'provider_13'],
      unknown: DEFAULT_CONFIGURED - 3,
    });
    expect(res.body).not.toContain('secret-ish');
  });

  it('turns back to ok once the down provider records a success', async () => {
    await observe(t.app, 'provider_06', false);
    expect((await t.app.inject({ url: '/status/health' })).statusCode).toBe(500);
    await observe(t.app, 'provider_06', true);
    const res = await t.app.inject({ url: '/status/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json().operational).toBe(1);
  });

  it('ignores status rows of providers that are not configured here', async () => {
    await db.pool.query(`INSERT INTO provider_status (provider, ok, last_error) VALUES ('provider_02', false, 'x')`);
    t.app.health.reader.invalidate();
    const res = await t.app.inject({ url: '/status/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json().down).toEqual([]);
  });

  it('answers HEAD like GET, without a body', async () => {
    await observe(t.app, 'provider_08', false);
    const res = await t.app.inject({ method: 'HEAD', url: '/status/health' });
    expect(res.statusCode).toBe(500);
    expectMonitorJson(res);
    expect(res.body).toBe('');
    const ok = await t.app.inject({ method: 'HEAD', url: '/status/health/weather' });
    expect(ok.statusCode).toBe(200);
  });

  it('answers other methods 405 in JSON with Allow: GET, HEAD', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
      for (const url of ['/status/health', '/status/health/', '/status/health/provider_01', '/status/health/nope/']) {
        const res = await t.app.inject({ method, url });
        expect(res.statusCode, `${method} ${url}`).toBe(405);
        expectMonitorJson(res);
        expect(res.headers.allow).toBe('GET, HEAD');
        expect(res.json()).toEqual({ status: 'error', detail: 'method not allowed' });
      }
    }
  });

  it('answers deeper unknown paths with a JSON 404 carrying no-store', async () => {
    const res = await t.app.inject({ url: '/status/health/provider_01/extra' });
    expect(res.statusCode).toBe(404);
    expectMonitorJson(res);
    expect(res.json()).toEqual({ status: 'error', detail: 'not found' });
  });
});

describe('single provider /status/health/<provider>', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, { ...BASE_ENV, DISABLED_PROVIDERS: 'provider_06', STATUS_MONITOR_PROVIDERS: 'maps' });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('answers 200 unknown with null timestamps for a provider never observed', async () => {
    for (const url of ['/status/health/provider_12', '/status/health/provider_12/']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expectMonitorJson(res);
      expect(res.json()).toEqual({
        status: 'ok',
        provider: 'provider_12',
        state: 'unknown',
        checked_at: null,
        last_ok_at: null,
      });
    }
  });

  it('answers 200 up with ISO 8601 UTC timestamps after a success', async () => {
    const before = Date.now();
    await observe(t.app, 'provider_01', true);
    const res = await t.app.inject({ url: '/status/health/provider_01' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'ok', provider: 'provider_01', state: 'up' });
    expect(body.checked_at).toMatch(ISO_Z);
    expect(body.last_ok_at).toMatch(ISO_Z);
    expect(Date.parse(body.last_ok_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Object.keys(body).sort()).toEqual(['checked_at', 'last_ok_at', 'provider', 'state', 'status']);
  });

  it('answers 500 down after a failure, keeping the earlier last_ok_at and hiding the error text', async () => {
    await observe(t.app, 'provider_09', true);
    const up = (await t.app.inject({ url: '/status/health/provider_09' })).json();
    await observe(t.app, 'provider_09', false, 'upstream error text 42');
    const res = await t.app.inject({ url: '/status/health/provider_09' });
    expect(res.statusCode).toBe(500);
    expectMonitorJson(res);
    const body = res.json();
    expect(body).toMatchObject({ status: 'down', provider: 'provider_09', state: 'down', last_ok_at: up.last_ok_at });
    expect(Date.parse(body.checked_at)).toBeGreaterThanOrEqual(Date.parse(up.checked_at));
    expect(res.body).not.toContain('upstream error text');
  });

  it('has last_ok_at null when the first observation is a failure', async () => {
    await observe(t.app, 'currency', false);
    const res = await t.app.inject({ url: '/status/health/currency' });
    expect(res.statusCode).toBe(500);
    expect(res.json().last_ok_at).toBeNull();
    expect(res.json().checked_at).toMatch(ISO_Z);
  });

  it('answers 404 for a provider that is not configured (no key) or switched off, never 200', async () => {
    for (const slug of ['provider_02', 'provider_06', 'translate']) {
      const res = await t.app.inject({ url: `/status/health/${slug}` });
      expect(res.statusCode, slug).toBe(404);
      expectMonitorJson(res);
      expect(res.json()).toEqual({
        status: 'error',
        provider: slug,
        detail: 'provider not configured on this instance',
      });
    }
  });

  it('answers 404 for an unknown name, echoing it safely', async () => {
    for (const slug of ['brave', 'engine', 'PROVIDER_01', 'x%3Cscript%3E']) {
      const res = await t.app.inject({ url: `/status/health/${slug}` });
      expect(res.statusCode, slug).toBe(404);
      expectMonitorJson(res);
      expect(res.json()).toEqual({ status: 'error', provider: decodeURIComponent(slug), detail: 'unknown provider' });
    }
  });

  it('is not narrowed by STATUS_MONITOR_PROVIDERS (scope is maps only here)', async () => {
    const res = await t.app.inject({ url: '/status/health/weather' });
    expect(res.statusCode).toBe(200);
    const rollUp = await t.app.inject({ url: '/status/health' });
    expect(rollUp.json().watched).toBe(1);
  });
});

describe('every provider slug of spec 4.3', () => {
  let db: TestDatabase;
  let t: TestApp;
  const ALL_KEYS = {
    BRAVE_API_KEY: 'k',
    MOJEEK_API_KEY: 'k',
    MARGINALIA_API_KEY: 'public',
    STAAN_API_KEY: 'k',
    PIXABAY_API_KEY: 'k',
    WORLDNEWS_API_KEY: 'k',
    THETVDB_API_KEY: 'k',
    TRIPADVISOR_API_KEY: 'k',
    LIBRETRANSLATE_URL: 'http://127.0.0.1:9',
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, ALL_KEYS);
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('answers each slug with 200 unknown, then 500 down, then 200 up', async () => {
    for (const slug of ALL_PROVIDER_SLUGS) {
      const url = `/status/health/${slug}`;
      const first = await t.app.inject({ url });
      expect(first.statusCode, slug).toBe(200);
      expect(first.json().state).toBe('unknown');
      await observe(t.app, slug as ProviderSlug, false);
      const down = await t.app.inject({ url });
      expect(down.statusCode, slug).toBe(500);
      expect(down.json()).toMatchObject({ status: 'down', provider: slug, state: 'down' });
      await observe(t.app, slug as ProviderSlug, true);
      const up = await t.app.inject({ url });
      expect(up.statusCode, slug).toBe(200);
      expect(up.json()).toMatchObject({ status: 'ok', provider: slug, state: 'up' });
    }
    const rollUp = await t.app.inject({ url: '/status/health' });
    expect(rollUp.json()).toEqual({ status: 'ok', watched: 16, operational: 16, down: [], unknown: 0 });
  });
});

describe('roll-up scope STATUS_MONITOR_PROVIDERS', () => {
  let db: TestDatabase;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(
      `INSERT INTO provider_status (provider, ok, last_error) VALUES ('provider_01', false, 'e'), ('weather', true, ''), ('provider_08', false, 'e')`,
    );
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
    await db.drop();
  });

  async function rollUp(scope: string, env: Record<string, string> = BASE_ENV) {
    const t = await buildTestApp(db, { ...env, STATUS_MONITOR_PROVIDERS: scope });
    apps.push(t);
    return t.app.inject({ url: '/status/health' });
  }

  it('watches a group key: engine', async () => {
    const res = await rollUp('engine');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ status: 'down', watched: 1, operational: 0, down: ['provider_01'], unknown: 0 });
  });

  it('watches slugs and groups together, ignoring names that match nothing', async () => {
    const res = await rollUp('instant, provider_13, bogus, provider_02');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', watched: 3, operational: 1, down: [], unknown: 2 });
  });

  it('watches the cards group (a down member makes it 500)', async () => {
    const res = await rollUp('cards');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ status: 'down', watched: 3, down: ['provider_08'] });
  });

  it('answers 500 no providers watched when nothing matches', async () => {
    for (const scope of ['bogus', 'provider_02', 'translate', 'ENGINE']) {
      const res = await rollUp(scope);
      expect(res.statusCode, scope).toBe(500);
      expectMonitorJson(res);
      expect(res.json()).toEqual({ status: 'error', detail: 'no providers watched' });
    }
  });

  it('answers 500 no providers watched when the group has no configured provider (engine without keys)', async () => {
    const res = await rollUp('engine', {});
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ status: 'error', detail: 'no providers watched' });
  });
});

describe('STATUS_MONITOR_ENABLED=false', () => {
  let db: TestDatabase;
  let t: TestApp;
  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, { ...BASE_ENV, STATUS_MONITOR_ENABLED: 'false', STATUS_MONITOR_TOKEN: 'tok' });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('answers 404 JSON with no-store on every health path, even with the right token', async () => {
    for (const url of [
      '/status/health',
      '/status/health/',
      '/status/health/provider_01',
      '/status/health/provider_01/',
      '/status/health/nope',
      '/status/health?token=tok',
    ]) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expectMonitorJson(res);
      expect(res.json()).toEqual({ status: 'error', detail: 'not found' });
    }
  });
});

describe('STATUS_MONITOR_TOKEN', () => {
  let db: TestDatabase;
  let t: TestApp;
  const TOKEN = 'mon-Token_123';
  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, { ...BASE_ENV, STATUS_MONITOR_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  const forbidden = { status: 'error', detail: 'invalid token' };

  it('accepts the token as ?token=, X-Monitor-Token or Authorization: Bearer', async () => {
    const ways = [
      { url: `/status/health?token=${TOKEN}` },
      { url: '/status/health', headers: { 'x-monitor-token': TOKEN } },
      { url: '/status/health', headers: { authorization: `Bearer ${TOKEN}` } },
      { url: `/status/health/provider_01/?token=${TOKEN}` },
      { url: '/status/health/weather', headers: { authorization: `Bearer   ${TOKEN}  ` } },
    ];
    for (const way of ways) {
      const res = await t.app.inject(way);
      expect(res.statusCode, JSON.stringify(way)).toBe(200);
    }
  });

  it('answers 403 JSON for a missing or wrong token on every health endpoint', async () => {
    const cases = [
      { url: '/status/health' },
      { url: '/status/health/' },
      { url: '/status/health/provider_01' },
      { url: '/status/health/unknown_thing' },
      { url: '/status/health?token=' },
      { url: '/status/health?token=wrong' },
      { url: `/status/health?token=${TOKEN}x` },
      { url: `/status/health?token=${TOKEN.slice(0, -1)}` },
      { url: '/status/health', headers: { 'x-monitor-token': 'wrong' } },
      { url: '/status/health', headers: { authorization: `bearer ${TOKEN}` } },
      { url: '/status/health', headers: { authorization: `Token ${TOKEN}` } },
      { url: '/status/health', headers: { authorization: TOKEN } },
      // a present but wrong ?token= wins over a correct header
      { url: '/status/health?token=wrong', headers: { 'x-monitor-token': TOKEN } },
    ];
    for (const c of cases) {
      const res = await t.app.inject(c);
      expect(res.statusCode, JSON.stringify(c)).toBe(403);
      expectMonitorJson(res);
      expect(res.json()).toEqual(forbidden);
    }
  });

  it('answers 403, not 500, for non-ASCII tokens in the query and the headers', async () => {
    const cases = [
      { url: '/status/health?token=t%C3%B6k%C3%A9n' },
      { url: '/status/health?token=%F0%9F%94%91' },
      { url: '/status/health?token=%FF%FE' },
      { url: '/status/health', headers: { 'x-monitor-token': Buffer.from('tök', 'utf8').toString('latin1') } },
      { url: '/status/health?token=a&token=b' },
    ];
    for (const c of cases) {
      const res = await t.app.inject(c);
      expect(res.statusCode, JSON.stringify(c)).toBe(403);
      expect(res.json()).toEqual(forbidden);
    }
  });

  it('accepts a non-ASCII token when it matches byte for byte', async () => {
    const t2 = await buildTestApp(db, { ...BASE_ENV, STATUS_MONITOR_TOKEN: 'clé-🔑' });
    try {
      const ok = await t2.app.inject({ url: `/status/health?token=${encodeURIComponent('clé-🔑')}` });
      expect(ok.statusCode).toBe(200);
      const no = await t2.app.inject({ url: `/status/health?token=${encodeURIComponent('cle-🔑')}` });
      expect(no.statusCode).toBe(403);
    } finally {
      await t2.close();
    }
  });

  it('checks the token before the provider name (no slug probing without it)', async () => {
    const res = await t.app.inject({ url: '/status/health/provider_02' });
    expect(res.statusCode).toBe(403);
  });
});

describe('database unreachable', () => {
  it('answers 500 database unavailable when the database port is closed', async () => {
    const pool = createPool('postgres://nobody:x@127.0.0.1:1/none');
    const app = await buildApp(testConfig(null, BASE_ENV), { pool, logger: false });
    try {
      const base = await listen(app);
      const res = await fetch(`${base}/status/health`);
      expect(res.status).toBe(500);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({ status: 'error', detail: 'database unavailable' });
      const one = await fetch(`${base}/status/health/provider_01`);
      expect(one.status).toBe(500);
      expect(await one.json()).toEqual({ status: 'error', provider: 'provider_01', detail: 'database unavailable' });
      // configuration is checked before the database
      const unconfigured = await fetch(`${base}/status/health/provider_02`);
      expect(unconfigured.status).toBe(404);
      // /up knows nothing about the database
      expect((await fetch(`${base}/up`)).status).toBe(200);
    } finally {
      await app.close();
      await pool.end();
    }
  });

  it('answers 500 database unavailable by its own deadline when the database accepts connections but never answers', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const blackHole: Server = createServer((s) => {
      sockets.add(s);
    });
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', () => r()));
    const port = (blackHole.address() as AddressInfo).port;
    // A pool that never gives up connecting (0: no connection timeout) to a server that never
    // answers: only the endpoint's own deadline can end these requests (a wait past it would hang
    // the test into its timeout; the deadline's length is the health store's, src/upstream/health-store.ts).
    const pool = createPool(`postgres://nobody:x@127.0.0.1:${port}/none`, { connectionTimeoutMillis: 0 });
    const app = await buildApp(testConfig(null, BASE_ENV), { pool, logger: false });
    try {
      const base = await listen(app);
      const [a, b] = await Promise.all([fetch(`${base}/status/health`), fetch(`${base}/status/health/weather`)]);
      expect(a.status).toBe(500);
      expect(await a.json()).toEqual({ status: 'error', detail: 'database unavailable' });
      expect(b.status).toBe(500);
    } finally {
      for (const s of sockets) s.destroy();
      await app.close();
      await pool.end().catch(() => {});
      await new Promise<void>((r) => blackHole.close(() => r()));
    }
  });

  it('answers 500 database unavailable when the database is cut while the server runs, and recovers', async () => {
    const db = await createTestDatabase();
    const t = await buildTestApp(db, BASE_ENV);
    try {
      const base = await listen(t.app);
      await observe(t.app, 'weather', true);
      expect((await fetch(`${base}/status/health`)).status).toBe(200);

      // Cut: no new connections to this database, and every open one terminated.
      const { adminPool, done } = await adminConnection(db);
      await adminPool.query(`ALTER DATABASE ${db.name} WITH ALLOW_CONNECTIONS false`);
      await adminPool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db.name]);
      await new Promise((r) => setTimeout(r, 300));
      const res = await fetch(`${base}/status/health`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ status: 'error', detail: 'database unavailable' });

      // Restore: the next request reads again, no restart needed.
      await adminPool.query(`ALTER DATABASE ${db.name} WITH ALLOW_CONNECTIONS true`);
      await done();
      let last: Response | undefined;
      for (let i = 0; i < 30; i++) {
        last = await fetch(`${base}/status/health/weather`);
        if (last.status === 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const lastBody = await last!.json();
      expect(last!.status, JSON.stringify(lastBody)).toBe(200);
      expect(lastBody).toMatchObject({ provider: 'weather', state: 'up' });
    } finally {
      await t.close();
      await db.drop();
    }
  });
});

/** A connection to the same server's maintenance database (the test db itself refuses connections). */
async function adminConnection(db: TestDatabase) {
  const u = new URL(db.url);
  u.pathname = '/postgres';
  const adminPool = createPool(u.toString(), { max: 1 });
  return { adminPool, done: () => adminPool.end() };
}
