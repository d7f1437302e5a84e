import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.js';
import { EUR_RATES, startFrankfurterFake } from '../fakes/frankfurter.js';
import { startOpenMeteoFake } from '../fakes/openmeteo.js';
import { buildTestApp, type TestApp, UNTHROTTLED, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { HUNDRED_USD_TO_EUR } from './currency-answers.js';

/*
 * GET /api/v1/instant/ through the real app, on a real database, with the
 * Open-Meteo and Frankfurter fakes: validation, usage, the IP answer with
 * and without a trusted proxy, weather (cached, localised, failing), and
 * currency rates kept in Postgres (refreshed at most daily, stale when the
 * feed is down, none when nothing is stored and the feed is down).
 */

const TIMEOUT_MS = 600;

let db: TestDatabase;
let meteo: FakeServer;
let fx: FakeServer;
let env: Record<string, string>;
let t: TestApp;
let apiKey: string;
let userId: number;

type Body = { query: string; answer: (Record<string, unknown> & { type: string }) | null };

async function get(
  path: string,
  options: { app?: TestApp; headers?: Record<string, string>; remoteAddress?: string } = {},
) {
  const res = await (options.app ?? t).app.inject({
    method: 'GET',
    url: path,
    headers: { authorization: `Api-Key ${apiKey}`, ...options.headers },
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
  return { status: res.statusCode, body: res.json() as Body };
}

const instant = (q: string, extra: Record<string, string> = {}, options: Parameters<typeof get>[1] = {}) =>
  get(`/api/v1/instant/?${new URLSearchParams({ q, ...extra })}`, options);

const usage = (app: TestApp = t) => searchesCounted(app, db, userId);

async function health(provider: string, app: TestApp = t) {
  await app.app.health.recorder.flush();
  const { rows } = await db.pool.query('SELECT ok, source, last_error FROM provider_status WHERE provider = $1', [
    provider,
  ]);
  return rows[0] as { ok: boolean; source: string; last_error: string } | undefined;
}

async function withApp<T>(extraEnv: Record<string, string>, run: (app: TestApp) => Promise<T>): Promise<T> {
  const app = await buildTestApp(db, { ...env, ...extraEnv });
  try {
    return await run(app);
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  [meteo, fx] = await Promise.all([startOpenMeteoFake(), startFrankfurterFake()]);
  env = {
    ...UNTHROTTLED,
    OPENMETEO_BASE_URL: meteo.url,
    OPENMETEO_GEOCODING_URL: meteo.url,
    FRANKFURTER_BASE_URL: fx.url,
    PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
  };
  t = await buildTestApp(db, env);
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'instant-user'));
});

afterEach(() => {
  for (const f of [meteo, fx]) {
    f.setMode({ kind: 'normal' });
    f.setMode({ kind: 'normal' }, '/v1/search');
    f.setMode({ kind: 'normal' }, '/v1/forecast');
    f.requests.length = 0;
  }
});

afterAll(async () => {
  await t?.close();
  await Promise.all([meteo?.close(), fx?.close()]);
  await db?.drop();
});

describe('GET /api/v1/instant/: the endpoint', () => {
  it('asks for an API key first', async () => {
    const res = await t.app.inject({ url: '/api/v1/instant/?q=2%2B2' });
    expect(res.statusCode).toBe(401);
  });

  it('answers 400 without q, counting nothing', async () => {
    const before = await usage();
    expect(await get('/api/v1/instant/')).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
    expect(await instant('   ')).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
    const long = await instant('a'.repeat(2001));
    expect(long.status).toBe(400);
    expect(Object.keys(long.body)).toEqual(['q']);
    expect(await usage()).toBe(before);
  });

  it('answers 200 {query, answer} with the stripped query, on both slash forms', async () => {
    expect(await instant('  2+2  ')).toEqual({
      status: 200,
      body: { query: '2+2', answer: { type: 'math', query: '2+2', expr: '2+2', result: '4', raw: 4 } },
    });
    const bare = await get('/api/v1/instant?q=10%20km%20to%20miles');
    expect(bare.status).toBe(200);
    expect(bare.body.answer).toMatchObject({ type: 'unit', category: 'length', result: '6.21371' });
  });

  it('answers a unit conversion as JSON, its payload listing every unit of the category', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/instant/?q=17+km+in+miles',
      headers: { authorization: `Api-Key ${apiKey}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json() as Body;
    expect(body.answer).toMatchObject({
      type: 'unit',
      query: '17 km in miles',
      payload: { from: 'kilometer', to: 'mile' },
    });
    const units = (body.answer!.payload as { units: { key: string; factor: number }[] }).units;
    expect(units).toHaveLength(14);
    expect(units).toContainEqual({ key: 'nanometer', symbol: 'nm', label: 'Nanometer', factor: 1e-9, offset: 0 });
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  });

  it('answers null for a query that is not an instant answer, and for queries over 280 characters', async () => {
    expect(await instant('best pizza in naples')).toEqual({
      status: 200,
      body: { query: 'best pizza in naples', answer: null },
    });
    const long = `qr ${'x'.repeat(300)}`;
    expect(await instant(long)).toEqual({ status: 200, body: { query: long, answer: null } });
  });

  it('answers HEAD like GET, and 405 to POST', async () => {
    const head = await t.app.inject({
      method: 'HEAD',
      url: '/api/v1/instant/?q=uuid',
      headers: { authorization: `Api-Key ${apiKey}` },
    });
    expect(head.statusCode).toBe(200);
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/v1/instant/?q=uuid',
      headers: { authorization: `Api-Key ${apiKey}` },
    });
    expect(post.statusCode).toBe(405);
  });

  it('counts one search per request, answered or not', async () => {
    const before = await usage();
    await instant('2+2');
    await instant('nothing to answer here');
    await instant('weather nowhere-at-all');
    expect(await usage()).toBe(before + 3);
  });

  it('never answers 500 to adversarial or odd queries', async () => {
    for (const q of [
      '9^9^9^9',
      '10000!',
      '1e309',
      `${'('.repeat(140)}1${')'.repeat(139)}`,
      'constructor.constructor("return process")()',
      'json {"__proto__": {"x": 1}}',
      'base64 decode ////',
      'url decode %E0%A4%A',
      'qr \u0000',
      'timestamp 99999999999999999999',
      'time in \u202e',
      '#zzzzzz',
      'rgb(999, 999, 999)',
      'random number between -999999999999999 and 999999999999999',
      'roll 999d999',
      '\uD800',
    ]) {
      const res = await instant(q);
      expect(res.status, q).toBe(200);
    }
  });
});

describe('GET /api/v1/instant/: what is my IP', () => {
  it('without TRUST_PROXY: the socket address, never X-Forwarded-For', async () => {
    const res = await instant(
      'what is my ip',
      {},
      {
        remoteAddress: '198.51.100.9',
        headers: { 'x-forwarded-for': '203.0.113.5', 'user-agent': 'curl/8.5.0' },
      },
    );
    expect(res.body.answer).toEqual({
      type: 'ip',
      query: 'what is my ip',
      ip: '198.51.100.9',
      user_agent: 'curl/8.5.0',
      is_local: false,
    });
    const local = await instant('my ip', {}, { headers: { 'x-forwarded-for': '203.0.113.5' } });
    expect(local.body.answer).toMatchObject({ ip: '127.0.0.1', is_local: true, user_agent: 'lightMyRequest' });
  });

  it('behind a trusted proxy: the client address the proxy reports', async () => {
    await withApp({ TRUST_PROXY: '127.0.0.1' }, async (app) => {
      const viaProxy = await instant('my ip', {}, { app, headers: { 'x-forwarded-for': '203.0.113.5' } });
      expect(viaProxy.body.answer).toMatchObject({ ip: '203.0.113.5', is_local: false });
      // a request that does not come from the trusted proxy: its header is ignored
      const direct = await instant(
        'my ip',
        {},
        {
          app,
          remoteAddress: '198.51.100.9',
          headers: { 'x-forwarded-for': '203.0.113.5' },
        },
      );
      expect(direct.body.answer).toMatchObject({ ip: '198.51.100.9' });
      const privateClient = await instant('my ip', {}, { app, headers: { 'x-forwarded-for': '10.0.0.7' } });
      expect(privateClient.body.answer).toMatchObject({ ip: '10.0.0.7', is_local: true });
    });
    await withApp({ TRUST_PROXY: 'true' }, async (app) => {
      const res = await instant(
        'my ip',
        {},
        {
          app,
          remoteAddress: '198.51.100.9',
          headers: { 'x-forwarded-for': '203.0.113.5, 10.0.0.1' },
        },
      );
      expect(res.body.answer).toMatchObject({ ip: '203.0.113.5' });
    });
  });
});

describe('GET /api/v1/instant/: weather from Open-Meteo', () => {
  it('geocodes, then forecasts, and records the provider as up', async () => {
    const res = await instant('weather in Paris');
    expect(res.status).toBe(200);
    expect(res.body.answer).toMatchObject({
      type: 'weather',
      query: 'weather in Paris',
      location: 'Paris',
      country: 'France',
      code: 3,
      emoji: '☁️',
      temp_c: 6,
      temp_f: 44,
      feels_c: 4,
      feels_f: 39,
      humidity: 81,
      wind_kmh: 12,
      wind_dir: 'SW',
      is_day: true,
    });
    const daily = res.body.answer!.daily as Record<string, unknown>[];
    expect(daily).toHaveLength(7);
    // 2025-11-21 is a Friday (0 = Monday)
    expect(daily[0]).toEqual({
      weekday: 4,
      code: 3,
      emoji: '☁️',
      high_c: 8,
      low_c: 2,
      high_f: 47,
      low_f: 36,
      is_today: true,
    });
    expect(daily.map((d) => d.weekday)).toEqual([4, 5, 6, 0, 1, 2, 3]);
    expect(daily.filter((d) => d.is_today)).toHaveLength(1);

    const [geo, forecast] = meteo.requests;
    expect(geo!.path).toBe('/v1/search');
    expect(Object.fromEntries(geo!.query)).toEqual({ name: 'Paris', count: '1', language: 'en', format: 'json' });
    expect(forecast!.path).toBe('/v1/forecast');
    expect(forecast!.query.get('latitude')).toBe('48.85341');
    expect(forecast!.query.get('timezone')).toBe('auto');
    expect(forecast!.query.get('forecast_days')).toBe('7');
    expect(await health('weather')).toMatchObject({ ok: true, source: 'query' });
  });

  it('caches the answer per place and language', async () => {
    await instant('berlin weather');
    const asked = meteo.requests.length;
    expect(asked).toBe(2);
    expect((await instant('weather berlin')).body.answer).toMatchObject({ location: 'Berlin', country: 'Germany' });
    expect(meteo.requests.length).toBe(asked);
    await instant('weather berlin', { lang: 'de' });
    expect(meteo.requests.length).toBe(asked + 2);
    expect(meteo.requests[asked]!.query.get('language')).toBe('de');
  });

  it('asks in the lang language', async () => {
    const res = await instant('weather münchen', { lang: 'de' });
    expect(res.body.answer).toMatchObject({ type: 'weather', location: 'München', country: 'Deutschland' });
  });

  it('an unknown place is no answer', async () => {
    expect(await instant('weather atlantis')).toEqual({
      status: 200,
      body: { query: 'weather atlantis', answer: null },
    });
    expect(meteo.requests).toHaveLength(1);
  });

  it('a failing upstream is no answer (never a 500) and is recorded as down', async () => {
    meteo.setMode({ kind: 'status', status: 500, body: { error: true, reason: 'boom' } }, '/v1/forecast');
    expect(await instant('weather tokyo')).toEqual({ status: 200, body: { query: 'weather tokyo', answer: null } });
    expect(await health('weather')).toMatchObject({ ok: false, source: 'query' });

    for (const mode of [{ kind: 'garbage' }, { kind: 'hang' }, { kind: 'reset' }] as const) {
      meteo.setMode(mode, '/v1/search');
      // failures are never cached, so the same query reaches the upstream each time; a hung one
      // never answers, so only its timeout can end the request
      const res = await instant('weather munich');
      expect(res, mode.kind).toEqual({ status: 200, body: { query: 'weather munich', answer: null } });
    }
    // failures are not cached: the place answers once the upstream is back
    meteo.setMode({ kind: 'normal' }, '/v1/search');
    meteo.setMode({ kind: 'normal' }, '/v1/forecast');
    expect((await instant('weather tokyo')).body.answer).toMatchObject({ location: 'Tokyo', country: 'Japan' });
  });

  it('DISABLED_PROVIDERS=weather: no answer, no call', async () => {
    await withApp({ DISABLED_PROVIDERS: 'weather' }, async (app) => {
      expect((await instant('weather paris', {}, { app })).body.answer).toBeNull();
      expect(meteo.requests).toHaveLength(0);
    });
  });
});

describe('GET /api/v1/instant/: currency from Frankfurter, stored in Postgres', () => {
  /** Units of `code` per 1 USD as the fake reports them (derived from its EUR rates, 5 decimals). */
  const usdTo = (code: string) => Math.round(((EUR_RATES[code] ?? 1) / EUR_RATES.USD!) * 100000) / 100000;

  async function storedRows() {
    const { rows } = await db.pool.query<{ code: string; per_usd: number; rate_date: string }>(
      "SELECT code, per_usd, to_char(rate_date, 'YYYY-MM-DD') AS rate_date FROM currency_rates ORDER BY code",
    );
    return rows;
  }

  it('fetches the rates once, stores them, and converts', async () => {
    await db.pool.query('DELETE FROM currency_rates');
    const res = await instant('100 usd to eur');
    const perUsd = usdTo('EUR');
    expect(res.body.answer).toMatchObject({
      ...HUNDRED_USD_TO_EUR,
      query: '100 usd to eur',
      result: (100 * perUsd).toFixed(2),
      result_raw: Math.round(100 * perUsd * 100) / 100,
      unit_rate: perUsd,
      date: '2024-11-25',
      stale: false,
    });
    const answer = res.body.answer!;
    expect(answer.popular).toEqual(expect.arrayContaining(['USD', 'EUR', 'GBP', 'JPY']));
    const data = answer.data as { rates: Record<string, number>; meta: Record<string, { name: string; flag: string }> };
    expect(data.rates).toMatchObject({ USD: 1, EUR: perUsd, GBP: usdTo('GBP') });
    expect(data.meta.GBP).toMatchObject({ name: 'British Pound', flag: '🇬🇧' });

    expect(fx.requests).toHaveLength(1);
    expect(fx.requests[0]!.path).toBe('/latest');
    expect(fx.requests[0]!.query.get('base')).toBe('USD');
    const rows = await storedRows();
    expect(rows.map((r) => r.code)).toEqual(['AUD', 'CAD', 'CHF', 'CNY', 'EUR', 'GBP', 'INR', 'JPY', 'SEK', 'USD']);
    expect(rows.find((r) => r.code === 'JPY')).toMatchObject({ per_usd: usdTo('JPY'), rate_date: '2024-11-25' });
    expect(await health('currency')).toMatchObject({ ok: true, source: 'query' });

    // cross rates through USD
    const cross = await instant('50 gbp in jpy');
    expect(cross.body.answer).toMatchObject({ from_code: 'GBP', to_code: 'JPY', stale: false });
    expect(cross.body.answer!.result_raw).toBeCloseTo((50 * usdTo('JPY')) / usdTo('GBP'), 1);
    expect(fx.requests).toHaveLength(1);
  });

  it('refreshes at most daily: a restarted instance reuses rates stored today', async () => {
    await instant('1 usd to chf');
    fx.requests.length = 0;
    await withApp({}, async (app) => {
      expect((await instant('1 usd to chf', {}, { app })).body.answer).toMatchObject({ stale: false, to_code: 'CHF' });
      expect(fx.requests).toHaveLength(0);
    });
    // a day later, the next query refreshes them
    await db.pool.query("UPDATE currency_rates SET fetched_at = now() - interval '25 hours'");
    await withApp({}, async (app) => {
      expect((await instant('1 usd to chf', {}, { app })).body.answer).toMatchObject({ stale: false });
      expect(fx.requests).toHaveLength(1);
      const { rows } = await db.pool.query(
        "SELECT count(*)::int AS n FROM currency_rates WHERE fetched_at > now() - interval '1 minute'",
      );
      expect(rows[0].n).toBeGreaterThan(0);
    });
  });

  it('feed down: the stored rates, marked stale; the feed is recorded as down', async () => {
    await instant('1 usd to eur');
    await db.pool.query(
      "UPDATE currency_rates SET fetched_at = now() - interval '3 days', per_usd = CASE code WHEN 'EUR' THEN per_usd * 2 ELSE per_usd END",
    );
    fx.setMode({ kind: 'status', status: 503, body: { message: 'unavailable' } });
    await withApp({}, async (app) => {
      const res = await instant('10 usd to eur', {}, { app });
      expect(res.status).toBe(200);
      const doubled = usdTo('EUR') * 2;
      expect(res.body.answer).toMatchObject({
        type: 'currency',
        stale: true,
        unit_rate: Number(doubled.toPrecision(6)),
      });
      expect(await health('currency', app)).toMatchObject({ ok: false, source: 'query' });
      // not asked again on every query while it is down
      const asked = fx.requests.length;
      expect((await instant('20 usd to eur', {}, { app })).body.answer).toMatchObject({ stale: true });
      expect(fx.requests.length).toBe(asked);
    });
    // the feed is back: fresh rates replace the stale ones
    fx.setMode({ kind: 'normal' });
    await withApp({}, async (app) => {
      const res = await instant('10 usd to eur', {}, { app });
      expect(res.body.answer).toMatchObject({ stale: false, unit_rate: usdTo('EUR') });
    });
  });

  it('feed down and nothing stored: no answer', async () => {
    await db.pool.query('DELETE FROM currency_rates');
    fx.setMode({ kind: 'hang' });
    await withApp({}, async (app) => {
      expect(await instant('100 usd to eur', {}, { app })).toEqual({
        status: 200,
        body: { query: '100 usd to eur', answer: null },
      });
    });
    fx.setMode({ kind: 'garbage' });
    await withApp({}, async (app) => {
      expect((await instant('100 usd to eur', {}, { app })).body.answer).toBeNull();
      // other answers are unaffected
      expect((await instant('100 km to mi', {}, { app })).body.answer).toMatchObject({ type: 'unit' });
    });
  });

  it('DISABLED_PROVIDERS=currency: no answer, even with rates stored, and no call', async () => {
    await instant('1 usd to eur');
    fx.requests.length = 0;
    await withApp({ DISABLED_PROVIDERS: 'currency' }, async (app) => {
      expect((await instant('1 usd to eur', {}, { app })).body.answer).toBeNull();
      expect(fx.requests).toHaveLength(0);
    });
  });

  it('a currency the feed does not have is no answer', async () => {
    fx.setMode({ kind: 'normal' });
    expect((await instant('100 usd to krw')).body.answer).toBeNull();
  });
});
