import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startProbeScheduler } from '../../src/upstream/probes.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import type { FakeServer } from '../fakes/fake-server.js';
import { startFrankfurterFake } from '../fakes/frankfurter.js';
import { type LibreTranslateFake, startLibreTranslateFake } from '../fakes/libretranslate.js';
import { type NominatimFake, startNominatimFake } from '../fakes/nominatim.js';
import { CITIES, startOpenMeteoFake } from '../fakes/openmeteo.js';

/*
 * Active probes of provider_13 (Nominatim status), translate (LibreTranslate
 * languages), weather (Open-Meteo geocoding) and currency (Frankfurter
 * rates) against local fakes; the schedule and its lock; the CLI command.
 */

const run = promisify(execFile);

describe('provider probes', () => {
  let db: TestDatabase;
  let t: TestApp;
  let nominatim: NominatimFake;
  let libre: LibreTranslateFake;
  let meteo: FakeServer;
  let frankfurter: FakeServer;
  let env: Record<string, string>;

  const states = async () =>
    Object.fromEntries(
      (
        await db.pool.query<{ provider: string; ok: boolean; source: string; last_error: string }>(
          'SELECT provider, ok, source, last_error FROM provider_status ORDER BY provider',
        )
      ).rows.map((r) => [r.provider, r]),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    [nominatim, libre, meteo, frankfurter] = await Promise.all([
      startNominatimFake(),
      startLibreTranslateFake(),
      startOpenMeteoFake(),
      startFrankfurterFake(),
    ]);
    env = {
      NOMINATIM_BASE_URL: nominatim.url,
      LIBRETRANSLATE_URL: libre.url,
      OPENMETEO_BASE_URL: meteo.url,
      OPENMETEO_GEOCODING_URL: meteo.url,
      FRANKFURTER_BASE_URL: frankfurter.url,
      PROVIDER_TIMEOUT_MS: '500',
      PROBE_INTERVAL_SECONDS: '0',
    };
    t = await buildTestApp(db, env);
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([nominatim.close(), libre.close(), meteo.close(), frankfurter.close()]);
    await db.drop();
  });
  beforeEach(async () => {
    for (const f of [nominatim, libre, meteo, frankfurter]) f.setMode({ kind: 'normal' });
    nominatim.status = { status: 0, message: 'OK' };
    libre.languages = (await import('../fakes/libretranslate.js')).LANGUAGES;
    await db.pool.query('DELETE FROM provider_status');
  });

  it('records every probed provider up, with source probe, using only the free endpoints', async () => {
    expect(await t.app.health.probeNow()).toBe(true);
    const s = await states();
    for (const slug of ['provider_13', 'translate', 'weather', 'currency']) {
      expect(s[slug], slug).toMatchObject({ ok: true, source: 'probe', last_error: '' });
    }
    expect(nominatim.requests.at(-1)).toMatchObject({ path: '/status' });
    expect(nominatim.requests.at(-1)!.query.get('format')).toBe('json');
    expect(libre.requests.at(-1)).toMatchObject({ method: 'GET', path: '/languages' });
    expect(meteo.requests.at(-1)!.path).toBe('/v1/search');
    expect(meteo.requests.at(-1)!.query.get('name')).toBe('Paris');
    expect(frankfurter.requests.at(-1)!.path).toBe('/latest');
    expect(frankfurter.requests.at(-1)!.query.get('base')).toBe('USD');
    expect(nominatim.requests.at(-1)!.headers['user-agent']).toMatch(/^Sift\//);
  });

  it('records each kind of probe failure as down with a clear error', async () => {
    nominatim.status = { status: 700, message: 'Database connection failed' };
    libre.languages = [];
    meteo.setMode({
      kind: 'status',
      status: 429,
      body: { error: true, reason: 'Minutely API request limit exceeded.' },
    });
    frankfurter.setMode({ kind: 'hang' });
    // Frankfurter never answers: the probe round ends by its 500 ms timeout, which its error names.
    await t.app.health.probeNow();
    const s = await states();
    expect(s.provider_13).toMatchObject({
      ok: false,
      source: 'probe',
      last_error: 'status 700: Database connection failed',
    });
    expect(s.translate).toMatchObject({ ok: false, last_error: 'empty language list' });
    expect(s.weather!.ok).toBe(false);
    expect(s.weather!.last_error).toMatch(/^HTTP 429 rate limited/);
    expect(s.currency).toMatchObject({ ok: false, last_error: 'no complete answer within 500 ms' });
    const health = await t.app.inject({ url: '/status/health' });
    expect(health.statusCode).toBe(500);
    expect(health.json().down).toEqual(['weather', 'currency', 'provider_13', 'translate']);
  });

  it('records a geocoding answer with no place (no `results` key) as down', async () => {
    const saved = CITIES.splice(0);
    try {
      await t.app.health.probeNow();
      const s = await states();
      expect(s.weather).toMatchObject({ ok: false, last_error: 'geocoding lookup returned no place' });
      expect(s.currency!.ok).toBe(true);
    } finally {
      CITIES.push(...saved);
    }
  });

  it('skips translate when LIBRETRANSLATE_URL is not set, and disabled providers', async () => {
    const app2 = await buildTestApp(db, { ...env, LIBRETRANSLATE_URL: '', DISABLED_PROVIDERS: 'currency' });
    const before = { libre: libre.requests.length, fx: frankfurter.requests.length };
    try {
      await app2.app.health.probeNow();
      expect(libre.requests.length).toBe(before.libre);
      expect(frankfurter.requests.length).toBe(before.fx);
      const s = await states();
      expect(Object.keys(s).sort()).toEqual(['provider_13', 'weather']);
    } finally {
      await app2.close();
    }
  });

  it('runs on its schedule, one instance at a time (advisory lock), and stops when asked', async () => {
    let runs = 0;
    const scheduler = startProbeScheduler({
      pool: db.pool,
      run: async () => {
        runs++;
      },
      intervalMs: 60,
      initialDelayMs: 10,
    });
    try {
      for (let i = 0; i < 100 && runs < 3; i++) await new Promise((r) => setTimeout(r, 20));
      expect(runs).toBeGreaterThanOrEqual(3);

      // Another instance holds the probe lock: this one skips its turns.
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        await other.query('SELECT pg_advisory_lock(7262817303)');
        expect(await scheduler.runOnce()).toBe(false);
        const held = runs;
        await new Promise((r) => setTimeout(r, 200));
        expect(runs).toBe(held);
        await other.query('SELECT pg_advisory_unlock(7262817303)');
        expect(await scheduler.runOnce()).toBe(true);
      } finally {
        await other.end();
      }
    } finally {
      await scheduler.stop();
    }
    const stoppedAt = runs;
    await new Promise((r) => setTimeout(r, 200));
    expect(runs).toBe(stoppedAt);
  });

  it('never schedules when PROBE_INTERVAL_SECONDS is 0', async () => {
    let runs = 0;
    const scheduler = startProbeScheduler({
      pool: db.pool,
      run: async () => void runs++,
      intervalMs: 0,
      initialDelayMs: 1,
    });
    await new Promise((r) => setTimeout(r, 100));
    await scheduler.stop();
    expect(runs).toBe(0);
  });

  it('`check-provider-health` probes once and prints <slug>: up|down per provider', async () => {
    nominatim.status = { status: 700, message: 'Database connection failed' };
    const { stdout } = await run('node', ['--import', 'tsx', 'src/cli/main.ts', 'check-provider-health'], {
      env: { PATH: process.env.PATH, DATABASE_URL: db.url, LOG_LEVEL: 'silent', ...env },
      timeout: 30_000,
    });
    expect(stdout).toBe('provider_13: down\ntranslate: up\nweather: up\ncurrency: up\n');
    const s = await states();
    expect(s.provider_13).toMatchObject({ ok: false, source: 'probe' });
    expect(s.currency).toMatchObject({ ok: true, source: 'probe' });
  });

  it('`check-provider-health` says so when there is nothing to probe', async () => {
    const { stdout } = await run('node', ['--import', 'tsx', 'src/cli/main.ts', 'check-provider-health'], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: db.url,
        DISABLED_PROVIDERS: 'provider_13,weather,currency',
        LOG_LEVEL: 'silent',
      },
      timeout: 30_000,
    });
    expect(stdout).toBe('No providers to probe (none configured).\n');
  });
});
