import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { type LibreTranslateFake, startLibreTranslateFake } from '../fakes/libretranslate.js';
import { buildTestApp, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Per-provider suspension seen through the API (docs/architecture.md, Providers): a
 * provider that keeps failing, or answers 429 with Retry-After, is skipped by
 * searches and listed as `unavailable`, without being called; a success or
 * the interval's end brings it back; probes still run.
 */

let db: TestDatabase;
let fakes: WebFakes;
let libre: LibreTranslateFake;
let t: TestApp;
let apiKey: string;
let counter = 0;

const uniq = (base: string) => `${base} ${++counter}`;

async function web(engine: string) {
  const q = encodeURIComponent(uniq('suspension'));
  const res = await t.app.inject({
    url: `/api/v1/web/?q=${q}&engine=${engine}`,
    headers: { authorization: `Api-Key ${apiKey}` },
  });
  return { status: res.statusCode, body: res.json() as { results: unknown[]; unresponsive: unknown[] } };
}

const calls = (fake: { requests: { path: string }[] }, prefix = '/') =>
  fake.requests.filter((r) => r.path.startsWith(prefix)).length;

beforeAll(async () => {
  db = await createTestDatabase();
  [fakes, libre] = await Promise.all([startWebFakes(), startLibreTranslateFake()]);
  t = await buildTestApp(db, {
    ...fakes.env,
    ...UNTHROTTLED,
    LIBRETRANSLATE_URL: libre.url,
    PROVIDER_TIMEOUT_MS: '1000',
    PROVIDER_SUSPEND_AFTER_FAILURES: '3',
    PROVIDER_SUSPEND_FIRST_SECONDS: '60',
  });
  const user = await createUser(db.pool, { username: 'suspended' });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
});

afterEach(() => {
  for (const f of [fakes.brave, fakes.mojeek, fakes.marginalia, fakes.staan, libre]) f.setMode({ kind: 'normal' });
  libre.setMode({ kind: 'normal' }, '/translate');
});

afterAll(async () => {
  await t?.close();
  await Promise.all([fakes?.close(), libre?.close()]);
  await db?.drop();
});

describe('provider suspension', () => {
  it('skips an engine after three failures in a row and lists it as unavailable without calling it', async () => {
    fakes.mojeek.setMode({ kind: 'status', status: 500, body: { error: 'internal' } });
    const before = calls(fakes.mojeek);
    for (let i = 0; i < 3; i++) {
      const res = await web('provider_01,provider_02');
      expect(res.status).toBe(200);
      expect(res.body.unresponsive).toEqual([{ engine: 'provider_02', reason: 'error' }]);
    }
    expect(calls(fakes.mojeek) - before).toBe(3);

    const skipped = await web('provider_01,provider_02');
    expect(skipped.status).toBe(200);
    expect(skipped.body.unresponsive).toEqual([{ engine: 'provider_02', reason: 'unavailable' }]);
    expect(skipped.body.results.length).toBeGreaterThan(0);
    expect(calls(fakes.mojeek) - before).toBe(3);
    expect(t.app.health.suspensions.list().map((s) => s.provider)).toContain('provider_02');

    // Only that engine asked, and suspended: every asked provider failed, so 502, still without a call.
    const alone = await web('provider_02');
    expect(alone.status).toBe(502);
    expect(calls(fakes.mojeek) - before).toBe(3);
  });

  it('honours a 429 Retry-After at once, then calls the engine again when the wait is over', async () => {
    fakes.brave.setMode({ kind: 'status', status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '1' } });
    const before = calls(fakes.brave, '/res/v1/web');
    const limited = await web('provider_01,provider_03');
    expect(limited.body.unresponsive).toEqual([{ engine: 'provider_01', reason: 'rate_limited' }]);
    fakes.brave.setMode({ kind: 'normal' });

    const skipped = await web('provider_01,provider_03');
    expect(skipped.body.unresponsive).toEqual([{ engine: 'provider_01', reason: 'unavailable' }]);
    expect(calls(fakes.brave, '/res/v1/web') - before).toBe(1);

    await new Promise((r) => setTimeout(r, 1100));
    const back = await web('provider_01,provider_03');
    expect(back.body.unresponsive).toEqual([]);
    expect(calls(fakes.brave, '/res/v1/web') - before).toBe(2);
  });

  it('never suspends an engine for refusing the request itself (HTTP 400, 422)', async () => {
    const before = calls(fakes.marginalia);
    for (const status of [400, 422, 400, 422, 400]) {
      fakes.marginalia.setMode({ kind: 'status', status, body: { error: 'bad parameter' } });
      const res = await web('provider_03,provider_04');
      expect(res.body.unresponsive).toEqual([{ engine: 'provider_03', reason: 'error' }]);
    }
    expect(calls(fakes.marginalia) - before).toBe(5);
  });

  it('lists a network failure as unreachable on each call, and suspends only after three in a row', async () => {
    fakes.staan.setMode({ kind: 'reset' });
    const before = calls(fakes.staan);
    for (let i = 1; i <= 3; i++) {
      const res = await web('provider_01,provider_04');
      expect(res.body.unresponsive).toEqual([{ engine: 'provider_04', reason: 'unreachable' }]);
      // Not suspended by the first failures: asked again each time.
      expect(calls(fakes.staan) - before).toBe(i);
    }
    const skipped = await web('provider_01,provider_04');
    expect(skipped.body.unresponsive).toEqual([{ engine: 'provider_04', reason: 'unavailable' }]);
    expect(calls(fakes.staan) - before).toBe(3);
  });

  it('still probes a suspended provider, and a probe that succeeds brings it back', async () => {
    libre.setMode({ kind: 'status', status: 500, body: { error: 'down' } }, '/translate');
    const translate = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/translate/',
        headers: { authorization: `Api-Key ${apiKey}`, 'content-type': 'application/json' },
        payload: { q: uniq('hello'), target: 'de' },
      });
    for (let i = 0; i < 3; i++) expect((await translate()).statusCode).toBe(503);
    expect(calls(libre, '/translate')).toBe(3);
    expect((await translate()).statusCode).toBe(503);
    expect(calls(libre, '/translate')).toBe(3);

    libre.setMode({ kind: 'normal' }, '/translate');
    const probesBefore = calls(libre, '/languages');
    expect(await t.app.health.probeNow()).toBe(true);
    expect(calls(libre, '/languages')).toBeGreaterThan(probesBefore);

    const res = await translate();
    expect(res.statusCode).toBe(200);
    expect(calls(libre, '/translate')).toBe(4);
  });
});
