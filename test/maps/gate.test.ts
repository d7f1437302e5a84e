import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../src/config/index.js';
import { createSearchCache } from '../../src/providers/cache.js';
import {
  createRateGate,
  gatedTask,
  isPublicNominatim,
  NominatimBusy,
  nominatimGate,
  RateGateBusy,
} from '../../src/providers/nominatim/gate.js';
import { nominatimReverseTask } from '../../src/providers/nominatim/reverse.js';
import { nominatimSearchCall, nominatimSearchTask } from '../../src/providers/nominatim/search.js';
import { createProviderServices, type ProviderServices } from '../../src/providers/services.js';
import { createProviderDirectory } from '../../src/providers/registry.js';
import type { ProviderCall, Upstream } from '../../src/providers/types.js';
import { registerSearchRoute } from '../../src/routes/api/search-route.js';
import { mapsQuerySchema, searchMaps } from '../../src/search/maps.js';
import { type NominatimFake, startNominatimFake } from '../fakes/nominatim.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/** A gate on a hand-driven clock; sleeps are recorded and resolve at once. */
function clockedGate() {
  const clock = { t: 0 };
  const sleeps: number[] = [];
  const gate = createRateGate({
    now: () => clock.t,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { gate, clock, sleeps };
}

describe('the Nominatim rate gate', () => {
  it('lets one call through per second, queues up to two seconds, then refuses without taking a slot', async () => {
    const { gate, clock, sleeps } = clockedGate();
    await gate.acquire();
    await gate.acquire();
    await gate.acquire();
    expect(sleeps).toEqual([1000, 2000]);

    let refusal: unknown;
    try {
      await gate.acquire();
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(RateGateBusy);
    expect((refusal as RateGateBusy).retryAfterMs).toBe(1000);
    // A refusal takes no slot: the next call in the same instant is refused alike.
    expect(() => gate.acquire()).toThrow(RateGateBusy);

    clock.t = 1500;
    await gate.acquire(); // slot at 3000
    expect(sleeps.at(-1)).toBe(1500);
    clock.t = 10_000;
    await gate.acquire();
    expect(sleeps).toHaveLength(3);
    clock.t = 10_400;
    await gate.acquire();
    expect(sleeps.at(-1)).toBe(600);
  });

  it('waits in real time when no clock is injected', async () => {
    const gate = createRateGate({ intervalMs: 30, maxWaitMs: 100 });
    const started = performance.now();
    await gate.acquire();
    await gate.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('binds only the public server', () => {
    expect(isPublicNominatim('https://nominatim.openstreetmap.org')).toBe(true);
    expect(isPublicNominatim('https://NOMINATIM.openstreetmap.org/')).toBe(true);
    expect(isPublicNominatim('http://nominatim.openstreetmap.org.:8080/x')).toBe(true);
    expect(isPublicNominatim('https://nominatim.example.org')).toBe(false);
    expect(isPublicNominatim('https://openstreetmap.org')).toBe(false);
    expect(isPublicNominatim('https://proxy.example/nominatim.openstreetmap.org')).toBe(false);
    expect(isPublicNominatim('http://127.0.0.1:8080')).toBe(false);
    expect(isPublicNominatim('not a url')).toBe(false);

    const gate = nominatimGate('https://nominatim.openstreetmap.org');
    expect(gate).not.toBeNull();
    expect(nominatimGate('https://nominatim.openstreetmap.org/')).toBe(gate);
    expect(nominatimGate('http://127.0.0.1:8080')).toBeNull();
  });

  it('gates the public server calls of both searches and reverse lookups, and nothing else', () => {
    const pub = parseConfig({});
    expect(pub.NOMINATIM_BASE_URL).toBe('https://nominatim.openstreetmap.org');
    const query = { q: 'x', limit: 1, lang: '' };
    expect('run' in nominatimSearchTask(query, pub)).toBe(true);
    expect('run' in nominatimReverseTask({ lat: 1, lon: 2, lang: '' }, pub)).toBe(true);
    const own = parseConfig({ NOMINATIM_BASE_URL: 'http://127.0.0.1:9' });
    const plain = nominatimSearchTask(query, own);
    expect('run' in plain).toBe(false);
    expect((plain as ProviderCall<unknown>).request.url).toBe(nominatimSearchCall(query, own).request.url);
    expect('run' in nominatimReverseTask({ lat: 1, lon: 2, lang: '' }, own)).toBe(false);
  });
});

describe('gated calls through the runner', () => {
  let db: TestDatabase;
  let fake: NominatimFake;
  let services: ProviderServices;

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startNominatimFake();
    const config = parseConfig({ DATABASE_URL: db.url, NOMINATIM_BASE_URL: fake.url, LOG_LEVEL: 'silent' });
    services = createProviderServices(config, db.pool, { cache: createSearchCache(4) });
  });

  afterAll(async () => {
    await services?.close();
    await fake?.close();
    await db?.drop();
  });

  it('refuses with NominatimBusy once the queue is full, serves cached answers without a slot, records no failure', async () => {
    const { gate } = clockedGate();
    const config = { NOMINATIM_BASE_URL: fake.url };
    const task = (q: string) => gatedTask(nominatimSearchCall({ q, limit: 10, lang: '' }, config), gate);
    const runner = services.runner;

    expect((await runner.call(task('berlin'))).map((p) => p.name)).toEqual(['Berlin']);
    expect((await runner.call(task('paris'))).map((p) => p.name)).toEqual(['Paris']);
    expect(await runner.call(task('nowhere'))).toEqual([]);
    expect(fake.requests).toHaveLength(3);

    const refused = await runner.call(task('rome')).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(NominatimBusy);
    expect((refused as NominatimBusy).retryAfterSeconds).toBe(1);
    expect((refused as NominatimBusy).provider).toBe('provider_13');
    expect(fake.requests).toHaveLength(3);

    // Cached: no gate, no request.
    expect((await runner.call(task('berlin'))).map((p) => p.name)).toEqual(['Berlin']);
    expect(fake.requests).toHaveLength(3);

    await services.recorder.flush();
    const { rows } = await db.pool.query('SELECT ok FROM provider_status WHERE provider = $1', ['provider_13']);
    expect(rows).toEqual([{ ok: true }]);
  });
});

describe('the busy answer', () => {
  it('is a 503 with Retry-After from the maps feature', async () => {
    const upstream: Upstream = {
      call: () => Promise.reject(new NominatimBusy(2)),
      gather: async () => [],
    };
    const deps = {
      config: parseConfig({}),
      upstream,
      providers: createProviderDirectory(parseConfig({})),
    };
    const params = mapsQuerySchema.parse({ q: 'berlin' });
    expect(await searchMaps(deps, params)).toEqual({
      status: 503,
      body: {
        detail:
          'The maps provider is busy (the public OpenStreetMap Nominatim server allows one request per second). Try again in 2 seconds.',
      },
      headers: { 'Retry-After': '2' },
    });
    // A reverse lookup falls back to the coordinates instead.
    const reverse = await searchMaps(deps, mapsQuerySchema.parse({ lat: '1', lon: '2', q: 'Here' }));
    expect(reverse.status).toBe(200);
    expect(reverse.body).toMatchObject({ query: '', places: [{ name: 'Here', lat: 1, lon: 2, category: '' }] });
  });

  it('carries its headers through the search route', async () => {
    const app = Fastify();
    registerSearchRoute(app, {
      path: '/busy/',
      schema: z.object({}),
      units: () => 1,
      handle: async () => ({ status: 503, body: { detail: 'busy' }, headers: { 'Retry-After': '3' } }),
    });
    const res = await app.inject({ url: '/busy/' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('3');
    expect(res.json()).toEqual({ detail: 'busy' });
    await app.close();
  });
});
