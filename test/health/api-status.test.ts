import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { GROUPS, PROVIDERS } from '../../src/providers/registry.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * The provider registry (spec 4.3) and
 * GET /api/v1/status/ (spec 2.10).
 */

describe('provider registry', () => {
  it('holds the 16 slugs of spec 4.3 in order, each in its group, with its monitor kind', () => {
    expect(PROVIDERS.map((p) => [p.slug, p.group, p.monitor])).toEqual([
      ['provider_01', 'engine', 'query'],
      ['provider_02', 'engine', 'query'],
      ['provider_03', 'engine', 'query'],
      ['provider_04', 'engine', 'query'],
      ['provider_05', 'media', 'query'],
      ['provider_06', 'media', 'query'],
      ['provider_07', 'media', 'query'],
      ['provider_08', 'cards', 'query'],
      ['provider_09', 'cards', 'query'],
      ['provider_10', 'cards', 'query'],
      ['provider_11', 'cards', 'query'],
      ['provider_12', 'cards', 'query'],
      ['weather', 'instant', 'probe'],
      ['currency', 'instant', 'probe'],
      ['provider_13', 'maps', 'probe'],
      ['translate', 'translate', 'probe'],
    ]);
    expect(GROUPS.map((g) => g.key)).toEqual(['engine', 'media', 'cards', 'instant', 'maps', 'translate']);
  });
});

describe('GET /api/v1/status/', () => {
  let db: TestDatabase;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, {
      BRAVE_API_KEY: 'k',
      MARGINALIA_API_KEY: 'public',
      DISABLED_PROVIDERS: 'provider_06',
      PROBE_INTERVAL_SECONDS: '0',
    });
    const user = await createUser(db.pool, { username: 'apistatus' });
    key = (await issueApiKey(db.pool, user.id)).key;
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  const get = (url = '/api/v1/status/', app = t.app) =>
    app.inject({ url, headers: { authorization: `Api-Key ${key}` } });

  it('requires an API key', async () => {
    const res = await t.app.inject({ url: '/api/v1/status/' });
    expect(res.statusCode).toBe(401);
  });

  it('lists configured providers in registry order, never-observed ones unknown with null times', async () => {
    const res = await get();
    expect(res.statusCode).toBe(200);
    const { providers } = res.json();
    expect(providers.map((p: { slug: string }) => p.slug)).toEqual([
      'provider_01',
      'provider_03',
      'provider_08',
      'provider_09',
      'provider_12',
      'weather',
      'currency',
      'provider_13',
    ]);
    expect(providers[0]).toEqual({
      slug: 'provider_01',
      name: 'Brave Search',
      group: 'engine',
      monitor: 'query',
      state: 'unknown',
      checked_at: null,
      last_ok_at: null,
      last_error: '',
      source: '',
    });
  });

  it('shows up and down states, the last error and the source of the last observation', async () => {
    const rec = t.app.health.recorder;
    rec.record({ provider: 'provider_01', ok: true, latencyMs: 5, source: 'query' });
    rec.record({ provider: 'provider_13', ok: true, latencyMs: 5, source: 'probe' });
    await rec.flush();
    rec.record({
      provider: 'provider_13',
      ok: false,
      error: 'status 700: Database connection failed',
      latencyMs: 5,
      source: 'probe',
    });
    await rec.flush();
    const { providers } = (await get('/api/v1/status')).json();
    const bySlug = Object.fromEntries(providers.map((p: { slug: string }) => [p.slug, p]));
    expect(bySlug.provider_01).toMatchObject({ state: 'up', last_error: '', source: 'query' });
    expect(bySlug.provider_01.checked_at).toMatch(/Z$/);
    expect(bySlug.provider_01.last_ok_at).toMatch(/Z$/);
    expect(bySlug.provider_13).toMatchObject({
      name: 'OpenStreetMap Nominatim',
      group: 'maps',
      monitor: 'probe',
      state: 'down',
      last_error: 'status 700: Database connection failed',
      source: 'probe',
    });
    expect(bySlug.provider_13.last_ok_at).toMatch(/Z$/);
  });

  it('degrades to all unknown when the status rows cannot be read', async () => {
    await db.pool.query('ALTER TABLE provider_status RENAME TO provider_status_away');
    t.app.health.reader.invalidate();
    try {
      const res = await get();
      expect(res.statusCode).toBe(200);
      const states = res.json().providers.map((p: { state: string }) => p.state);
      expect(new Set(states)).toEqual(new Set(['unknown']));
      expect(states).toHaveLength(8);
    } finally {
      await db.pool.query('ALTER TABLE provider_status_away RENAME TO provider_status');
      t.app.health.reader.invalidate();
    }
  });

  it('answers 404 with its message when the status page is not published (after auth)', async () => {
    const hidden = await buildTestApp(db, { STATUS_PAGE_ENABLED: 'false', PROBE_INTERVAL_SECONDS: '0' });
    try {
      const res = await get('/api/v1/status/', hidden.app);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: 'Provider status is not published on this instance.' });
      expect((await hidden.app.inject({ url: '/api/v1/status/' })).statusCode).toBe(401);
    } finally {
      await hidden.close();
    }
  });
});
