import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { type BraveFake, startBraveFake } from '../fakes/brave.js';
import { type PixabayFake, startPixabayFake } from '../fakes/pixabay.js';
import { type StaanFake, startStaanFake } from '../fakes/staan.js';
import { testConfig, UNTHROTTLED } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * An upstream's refusal of one of the request's parameters (a 400/404/414/422
 * that names it) is the request's fault: answered to the caller when the
 * caller gave the value, logged once when Sift derived it, and never recorded
 * as the provider failing nor counted toward its suspension. Real app, real
 * fakes answering as the upstreams do (gzip included), real Postgres.
 */

let db: TestDatabase;
let brave: BraveFake;
let pixabay: PixabayFake;
let staan: StaanFake;
let app: Awaited<ReturnType<typeof buildApp>>;
let pool: ReturnType<typeof createPool>;
let apiKey = '';
let userId = 0;
let counter = 0;
const lines: { level: number; msg: string; [k: string]: unknown }[] = [];

const uniq = (base: string) => `${base} ${++counter}`;

async function get(path: string) {
  const res = await app.inject({ method: 'GET', url: path, headers: { authorization: `Api-Key ${apiKey}` } });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

async function healthRow(provider: string) {
  await app.health.recorder.flush();
  const { rows } = await db.pool.query('SELECT ok, last_error FROM provider_status WHERE provider = $1', [provider]);
  return rows[0] as { ok: boolean; last_error: string } | undefined;
}

const refusalLogs = () => lines.filter((l) => l.msg.startsWith('upstream refused'));

beforeAll(async () => {
  db = await createTestDatabase();
  [brave, pixabay, staan] = await Promise.all([startBraveFake({ gzip: true }), startPixabayFake(), startStaanFake()]);
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const logger = pino({ level: 'warn' }, sink) as unknown as FastifyBaseLogger;
  pool = createPool(db.url, { max: 5 });
  app = await buildApp(
    testConfig(db, {
      ...UNTHROTTLED,
      LOG_LEVEL: 'warn',
      BRAVE_BASE_URL: brave.baseUrl,
      BRAVE_API_KEY: brave.key,
      PIXABAY_BASE_URL: pixabay.baseUrl,
      PIXABAY_API_KEY: pixabay.key,
      STAAN_BASE_URL: staan.baseUrl,
      STAAN_API_KEY: staan.key,
      PROVIDER_SUSPEND_AFTER_FAILURES: '2',
      DISABLED_PROVIDERS: 'provider_06,provider_07',
    }),
    { pool, logger },
  );
  await app.ready();
  const user = await createUser(db.pool, { username: 'refused' });
  userId = user.id;
  apiKey = (await issueApiKey(db.pool, user.id)).key;
});

afterEach(() => {
  brave.acceptSearchLangs(null);
  brave.failWith(null);
  for (const f of [brave, pixabay, staan]) f.requests.length = 0;
});

afterAll(async () => {
  await app?.close();
  await pool?.end();
  await Promise.all([brave?.close(), pixabay?.close(), staan?.close()]);
  await db?.drop();
});

describe("a refusal of the caller's own value", () => {
  it('answers 400 naming `page` when Pixabay has no such page, and never marks Pixabay down', async () => {
    const q = uniq('rare');
    pixabay.setHits(q, [{ pageURL: 'https://pixabay.com/photos/rare-1/', tags: 'rare' }]);
    expect((await get(`/api/v1/images/?q=${encodeURIComponent(q)}`)).status).toBe(200);
    expect(await healthRow('provider_05')).toMatchObject({ ok: true });
    for (let i = 0; i < 4; i++) {
      const res = await get(`/api/v1/images/?q=${encodeURIComponent(q)}&page=50`);
      expect(res).toEqual({
        status: 400,
        body: { page: 'Past the last page of images this provider has for the query.' },
      });
    }
    // Asked each time (no suspension after 2 "failures"), and still up.
    expect(pixabay.requests.filter((r) => r.query.get('page') === '50')).toHaveLength(4);
    expect(await healthRow('provider_05')).toMatchObject({ ok: true, last_error: '' });
    expect((await get(`/api/v1/images/?q=${encodeURIComponent(q)}`)).status).toBe(200);
    expect(refusalLogs()).toHaveLength(0);
  });

  it('is paid for by the caller: the upstream counted the call, so the search is not given back', async () => {
    const q = uniq('paid');
    pixabay.setHits(q, [{ pageURL: 'https://pixabay.com/photos/paid-1/', tags: 'paid' }]);
    await app.lifecycle.flush();
    const before = await monthlySearches(db.pool, userId);
    const asked = pixabay.requests.length;
    for (let i = 0; i < 3; i++) {
      expect((await get(`/api/v1/images/?q=${encodeURIComponent(q)}&page=60`)).status).toBe(400);
    }
    expect(pixabay.requests.length - asked).toBe(3);
    // A 400 Sift gives before asking any upstream costs nothing.
    expect((await get('/api/v1/images/?q=x&page=abc')).status).toBe(400);
    await app.lifecycle.flush();
    expect((await monthlySearches(db.pool, userId)) - before).toBe(3);
  });

  it('leaves a refusing provider out of `unresponsive` when another one answered', async () => {
    const q = uniq('blend');
    pixabay.setHits(q, [{ pageURL: 'https://pixabay.com/photos/blend-1/', tags: 'blend' }]);
    const res = await get(`/api/v1/images/?q=${encodeURIComponent(q)}&page=2`);
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([]);
    expect((res.body.results as unknown[]).length).toBe(10);
    expect(await healthRow('provider_05')).toMatchObject({ ok: true });
  });
});

describe('a refusal of a value Sift derived (its mapping to the upstream list)', () => {
  it('is logged once per distinct cause at warn, naming the parameter; Brave is listed, never recorded down', async () => {
    brave.acceptSearchLangs(['en', 'fr']);
    for (const q of [uniq('mapped'), uniq('mapped'), uniq('mapped')]) {
      const res = await get(`/api/v1/web/?q=${encodeURIComponent(q)}&engine=provider_01&lang=de`);
      expect(res).toEqual({
        status: 502,
        body: { detail: 'All search providers failed.', unresponsive: [{ engine: 'provider_01', reason: 'error' }] },
      });
    }
    expect(brave.requestsTo('web')).toHaveLength(3);
    expect(refusalLogs()).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'upstream refused the value Sift mapped for its parameter search_lang',
        provider: 'provider_01',
        status: 422,
        parameter: 'search_lang',
        value: 'de',
        from: 'lang',
      }),
    ]);
    // Another distinct cause is said once more.
    await get(`/api/v1/web/?q=${encodeURIComponent(uniq('mapped'))}&engine=provider_01&lang=it`);
    expect(refusalLogs().map((l) => l.value)).toEqual(['de', 'it']);
    const row = await healthRow('provider_01');
    expect(row === undefined || row.ok).toBe(true);
    // And the key never reaches the log.
    expect(JSON.stringify(lines)).not.toContain(brave.key);
  });

  it("reads Staan's refusal of a market, and Sift sends none Staan refuses", async () => {
    const res = await get(`/api/v1/web/?q=${encodeURIComponent(uniq('markets'))}&engine=provider_04&lang=en-GB`);
    expect(res.status).toBe(200);
    expect(staan.requests[0]!.query.get('market')).toBe('en-gb');
  });
});

describe('failures that are not refusals of a parameter', () => {
  it("still records Brave's 422 for a bad key as Brave failing", async () => {
    brave.failWith('invalid_key');
    const res = await get(`/api/v1/web/?q=${encodeURIComponent(uniq('bad key'))}&engine=provider_01`);
    expect(res.status).toBe(502);
    expect(await healthRow('provider_01')).toMatchObject({
      ok: false,
      last_error: expect.stringContaining('SUBSCRIPTION_TOKEN_INVALID'),
    });
    expect(refusalLogs().some((l) => l.value === '')).toBe(false);
  });
});
