import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import type { ProviderSlug } from '../../src/providers/types.js';
import { FALLBACK_LANGUAGES, TRANSLATION_UNAVAILABLE } from '../../src/search/translate.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { FAULTS, type Fault, type FaultStation, startFaultStation } from './fault-station.js';

/*
 * Issue 17, item 3: the upstream fault matrix, against every adapter, through
 * the public endpoints. Every provider's base URL points at its own fault
 * station (fault-station.ts) standing in front of the provider's fake; for
 * each fault, each case faults one provider (the others pass through to
 * their fakes) and asks the endpoint that reaches it:
 * - the endpoint answers as designed (502 with `unresponsive`, 200 with the
 *   provider listed in `unresponsive`, a null card or answer, translation's
 *   503), never a 500, within the provider timeout plus a generous margin;
 * - the provider is recorded down (provider_status, and its health
 *   endpoint answers 500 `down`), with a `last_error` an operator can read;
 * - the fault station saw the request (the case did reach the adapter).
 * Then ~2,400 faulty upstream calls through the web endpoint: sockets,
 * timers and memory come back to their baseline.
 */

const TIMEOUT_MS = 400;
const LIMITS = { API_THROTTLE_BURST: '1000000/min', API_THROTTLE_SUSTAINED: '10000000/day' };

type Reason = 'timeout' | 'error' | 'rate_limited' | 'unavailable';

/** What each fault must look like to API clients (`unresponsive[].reason`) and to operators (`last_error`). */
const EXPECTED: Record<Exclude<Fault, 'pass'>, { reason: Reason; lastError: RegExp }> = {
  refused: { reason: 'unavailable', lastError: /^connection refused$/ },
  'reset-mid-body': { reason: 'unavailable', lastError: /^connection closed by upstream before a complete answer$/ },
  // The call's own deadline, or the request's (a card lookup's) when it comes first.
  drip: {
    reason: 'timeout',
    lastError: new RegExp(`^no complete answer within (${TIMEOUT_MS} ms|the request deadline \\(${TIMEOUT_MS} ms\\))$`),
  },
  'http-500': { reason: 'error', lastError: /^HTTP 500: Internal Server Error$/ },
  'http-429': { reason: 'rate_limited', lastError: /^HTTP 429 rate limited \(Retry-After: 120\): / },
  'invalid-json': { reason: 'error', lastError: /^response is not valid JSON$/ },
  'huge-50mb': { reason: 'error', lastError: /^response larger than 5 MB$/ },
  'wrong-content-type': {
    reason: 'error',
    lastError: /^response is not valid JSON \(content type text\/html; charset=utf-8\)$/,
  },
  // Wikipedia follows redirects (and stops at the loop); the others never follow one.
  'redirect-loop': { reason: 'error', lastError: /^(HTTP 302, redirect not followed|redirect loop)$/ },
};

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

interface Case {
  slug: ProviderSlug;
  name: string;
  method?: 'GET' | 'POST';
  url: string;
  form?: Record<string, string>;
  /** The answer's check, given the reason the failure must be reported with. */
  check(answer: Answer, reason: Reason, slug: ProviderSlug): void;
}

const allFailed = (a: Answer, reason: Reason, slug: ProviderSlug) => {
  expect(a.status).toBe(502);
  expect(a.body).toEqual({ detail: 'All search providers failed.', unresponsive: [{ engine: slug, reason }] });
};
const oneUnresponsive = (a: Answer, reason: Reason, slug: ProviderSlug) => {
  expect(a.status).toBe(200);
  expect(a.body.unresponsive).toEqual([{ engine: slug, reason }]);
  expect((a.body.results as unknown[]).length).toBeGreaterThan(0);
};
const nullCard = (card: string) => (a: Answer) => {
  expect(a.status).toBe(200);
  expect(a.body[card]).toBeNull();
};
const nullAnswer = (a: Answer) => {
  expect(a.status).toBe(200);
  expect(a.body.answer).toBeNull();
};

let counter = 0;
const uniq = (base: string) => encodeURIComponent(`${base} ${++counter}`);

/** Every adapter, by the public endpoint that reaches it. */
const CASES: Case[] = [
  { slug: 'provider_01', name: 'Brave web', url: '/api/v1/web/?engine=provider_01&q=', check: allFailed },
  { slug: 'provider_01', name: 'Brave images', url: '/api/v1/images/?q=', check: oneUnresponsive },
  { slug: 'provider_01', name: 'Brave news', url: '/api/v1/news/?q=', check: oneUnresponsive },
  { slug: 'provider_01', name: 'Brave videos', url: '/api/v1/videos/?q=', check: oneUnresponsive },
  {
    slug: 'provider_01',
    name: 'Brave suggest',
    url: '/api/v1/suggest/?q=',

    check: (a) => {
      expect(a.status).toBe(200);
      expect(a.body.suggestions).toEqual([]);
    },
  },
  { slug: 'provider_02', name: 'Mojeek web', url: '/api/v1/web/?engine=provider_02&q=', check: allFailed },
  {
    slug: 'provider_03',
    name: 'Marginalia web',
    url: '/api/v1/web/?engine=provider_03&q=',

    check: allFailed,
  },
  { slug: 'provider_04', name: 'Staan web', url: '/api/v1/web/?engine=provider_04&q=', check: allFailed },
  { slug: 'provider_05', name: 'Pixabay images', url: '/api/v1/images/?q=', check: oneUnresponsive },
  { slug: 'provider_06', name: 'Sepia videos', url: '/api/v1/videos/?q=', check: oneUnresponsive },
  { slug: 'provider_07', name: 'World News news', url: '/api/v1/news/?q=', check: oneUnresponsive },
  {
    slug: 'provider_08',
    name: 'Wikipedia card',
    url: '/api/v1/cards/?q=jupiter',

    check: nullCard('wikipedia'),
  },
  {
    slug: 'provider_09',
    name: 'Wikidata classification',
    url: '/api/v1/cards/?q=jupiter',

    check: (a) => {
      expect(a.status).toBe(200);
      expect(a.body.wikipedia).toMatchObject({ title: 'Jupiter' });
    },
  },
  {
    slug: 'provider_10',
    name: 'TheTVDB card',
    url: '/api/v1/cards/?q=breaking%20bad',

    check: nullCard('thetvdb'),
  },
  {
    slug: 'provider_11',
    name: 'Tripadvisor card',
    url: '/api/v1/cards/?q=Eiffel%20Tower',

    check: nullCard('tripadvisor'),
  },
  {
    slug: 'provider_12',
    name: 'Stack Exchange card',
    url: '/api/v1/cards/?q=python%20list%20comprehension',

    check: nullCard('stackexchange'),
  },
  { slug: 'provider_13', name: 'Nominatim search', url: '/api/v1/maps/?q=Berlin', check: allFailed },
  {
    slug: 'provider_13',
    name: 'Nominatim reverse',
    url: '/api/v1/maps/?lat=52.52&lon=13.4',

    check: (a) => {
      expect(a.status).toBe(200);
      expect(a.body).toMatchObject({ query: '', places: [{ lat: 52.52, lon: 13.4 }] });
    },
  },
  {
    slug: 'provider_13',
    name: 'Nominatim map card',
    url: '/api/v1/cards/?q=Berlin',

    check: nullCard('map'),
  },
  {
    slug: 'weather',
    name: 'Open-Meteo weather',
    url: '/api/v1/instant/?q=weather%20in%20Paris',

    check: nullAnswer,
  },
  {
    slug: 'currency',
    name: 'Frankfurter rates',
    url: '/api/v1/instant/?q=100%20usd%20to%20eur',

    check: nullAnswer,
  },
  {
    slug: 'translate',
    name: 'LibreTranslate translate (GET)',
    url: '/api/v1/translate/?q=hello%20world&target=de',

    check: (a) => expect(a).toEqual({ status: 503, body: { detail: TRANSLATION_UNAVAILABLE } }),
  },
  {
    slug: 'translate',
    name: 'LibreTranslate translate (POST)',
    method: 'POST',
    url: '/api/v1/translate/',
    form: { q: 'bonjour', target: 'en' },

    check: (a) => expect(a).toEqual({ status: 503, body: { detail: TRANSLATION_UNAVAILABLE } }),
  },
  {
    slug: 'translate',
    name: 'LibreTranslate languages',
    url: '/api/v1/translate/languages/',

    check: (a) => expect(a).toEqual({ status: 200, body: { languages: FALLBACK_LANGUAGES } }),
  },
];

let db: TestDatabase;
let fakes: AllFakes;
const stations = new Map<ProviderSlug, FaultStation>();
let env: Record<string, string>;
let apiKey: string;
let secrets: string[];

/** Runs `fn` with a fresh app on the stations (a new app per fault: no cache, throttle or back-off carried over). */
async function withApp<T>(fn: (t: TestApp) => Promise<T>): Promise<T> {
  const t = await buildTestApp(db, env);
  try {
    return await fn(t);
  } finally {
    await t.close();
  }
}

async function ask(t: TestApp, c: Case, key = apiKey): Promise<Answer> {
  const url = c.url.endsWith('q=') ? `${c.url}${uniq('fault')}` : c.url;
  const res = await t.app.inject({
    method: c.method ?? 'GET',
    url,
    headers: {
      authorization: `Api-Key ${key}`,
      ...(c.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(c.form ? { payload: new URLSearchParams(c.form).toString() } : {}),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  env = { ...fakes.env, ...LIMITS, PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) };
  for (const p of fakes.providers) {
    const station = await startFaultStation(p.server.url);
    stations.set(p.slug, station);
    for (const variable of p.urlVariables) env[variable] = station.rewrite(env[variable]!);
  }
  secrets = Object.entries(fakes.env)
    .filter(([name]) => name.endsWith('_KEY'))
    .map(([, value]) => value);
  const user = await createUser(db.pool, { username: 'faults' });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
});

afterAll(async () => {
  await Promise.all([...stations.values()].map((s) => s.close()));
  await fakes?.close();
  await db?.drop();
});

describe('every adapter, through its endpoint, with everything passing', () => {
  it('answers 200 and reaches the provider of each case (so the fault cases below do reach it)', async () => {
    await withApp(async (t) => {
      for (const c of CASES) {
        t.app.searchCache.clear();
        const station = stations.get(c.slug)!;
        station.resetCounters();
        const a = await ask(t, c);
        expect(a.status, c.name).toBe(200);
        expect(station.requests, `${c.name} reached ${c.slug}`).toBeGreaterThan(0);
      }
    });
  });
});

describe.each(FAULTS.map((fault) => ({ fault })))('upstream fault: $fault', ({ fault }) => {
  const expected = EXPECTED[fault];

  it('every endpoint answers as designed within its deadline, and the provider is recorded down with a readable reason', {
    timeout: 90_000,
  }, async () => {
    await withApp(async (t) => {
      await db.pool.query('DELETE FROM currency_rates');
      for (const c of CASES) {
        const station = stations.get(c.slug)!;
        const label = `${c.name} (${fault})`;
        t.app.searchCache.clear();
        // Each case starts from a provider in good standing: the cases before it (same fault, same
        // provider, other endpoints) would have it suspended (suspension-api.test.ts covers that).
        t.app.health.suspensions.clear();
        await db.pool.query('DELETE FROM provider_status WHERE provider = $1', [c.slug]);
        station.resetCounters();
        await station.setFault(fault);
        // The fault stays on until the checks are done: a sibling call still in flight (a flow whose
        // first failure answered the request) meets the same fault.
        try {
          const a = await ask(t, c);
          if (fault !== 'refused') expect(station.requests, `${label} reached the provider`).toBeGreaterThan(0);
          expect(a.status, label).not.toBe(500);
          // A hung or stalled provider never ends: answering at all is its deadline's doing (the
          // provider's last error below says which deadline); how soon is the bench's `hung` section.
          c.check({ status: a.status, body: a.body }, expected.reason, c.slug);

          await t.app.health.recorder.flush();
          const { rows } = await db.pool.query<{ ok: boolean; last_error: string; source: string }>(
            'SELECT ok, last_error, source FROM provider_status WHERE provider = $1',
            [c.slug],
          );
          expect(rows[0], `${label}: provider_status row`).toMatchObject({ ok: false, source: 'query' });
          expect(rows[0]!.last_error, label).toMatch(expected.lastError);
          for (const secret of secrets) expect(rows[0]!.last_error).not.toContain(secret);
          const health = await t.app.inject({ url: `/status/health/${c.slug}` });
          expect(health.statusCode, label).toBe(500);
          expect(health.json(), label).toMatchObject({ status: 'down', provider: c.slug, state: 'down' });
        } finally {
          await station.setFault('pass');
        }
      }
      // Streams the app walked away from (a drip, a huge body) are over: nothing keeps reading them.
      const open = [...stations.values()];
      await waitFor('fault streams to end', () => open.every((s) => s.activeStreams() === 0));
    });
  });
});

/** `gc()` of this process (the flag can be set at run time; the function comes from a fresh context). */
function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function resources(): { sockets: number; timers: number } {
  const info = process.getActiveResourcesInfo();
  return {
    sockets: info.filter((r) => r === 'TCPSocketWrap').length,
    timers: info.filter((r) => r === 'Timeout').length,
  };
}

describe('thousands of faulty upstream calls', () => {
  it('leave no socket, timer or fault stream behind, and memory flat', { timeout: 90_000 }, async () => {
    const gc = collectGarbage();
    const engines: ProviderSlug[] = ['provider_01', 'provider_02', 'provider_03', 'provider_04'];
    const web = engines.map((slug) => stations.get(slug)!);
    /** Each request asks the four web engines: 4 faulty upstream calls per request. */
    const REQUESTS = 500;
    const CONCURRENCY = 20;
    const WARMUP = 80;

    await withApp(async (t) => {
      let statuses = new Map<number, number>();
      /** Requests in rounds of CONCURRENCY; each round, the four engines fail in four different ways. */
      async function run(count: number) {
        for (let round = 0, sent = 0; sent < count; round++) {
          await Promise.all(web.map((station, i) => station.setFault(FAULTS[(round + i * 2) % FAULTS.length]!)));
          // Every call must reach its fault: no engine skipped as suspended.
          t.app.health.suspensions.clear();
          const batch = Math.min(CONCURRENCY, count - sent);
          sent += batch;
          const answers = await Promise.all(
            Array.from({ length: batch }, () =>
              t.app.inject({ url: `/api/v1/web/?q=${uniq('leak')}`, headers: { authorization: `Api-Key ${apiKey}` } }),
            ),
          );
          for (const a of answers) statuses.set(a.statusCode, (statuses.get(a.statusCode) ?? 0) + 1);
        }
        await Promise.all(web.map((s) => s.setFault('pass')));
      }
      /** Waits for the fault streams and the upstream connections to end, writes what is buffered, collects garbage. */
      async function settled() {
        await waitFor('fault streams to end', () => web.every((s) => s.activeStreams() === 0));
        await waitFor('upstream connections to close', () => web.every((s) => s.openConnections() === 0), 15_000);
        await t.app.health.recorder.flush();
        await t.app.lifecycle.flush();
        for (let i = 0; i < 3; i++) {
          gc();
          await new Promise((r) => setTimeout(r, 20));
        }
      }

      await run(WARMUP);
      await settled();
      const before = { ...process.memoryUsage(), ...resources() };
      statuses = new Map();
      const started = performance.now();
      await run(REQUESTS);
      const elapsed = performance.now() - started;
      await settled();
      const after = { ...process.memoryUsage(), ...resources() };

      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
      const growth = (k: 'rss' | 'heapUsed' | 'external') =>
        `${mb(before[k])} -> ${mb(after[k])} (+${mb(after[k] - before[k])})`;
      console.info(
        `fault soak: ${REQUESTS} requests x 4 engines = ${REQUESTS * 4} faulty upstream calls in ${Math.round(elapsed)} ms; ` +
          `statuses ${JSON.stringify(Object.fromEntries(statuses))}; RSS ${growth('rss')}, heap ${growth('heapUsed')}, ` +
          `external ${growth('external')}; sockets ${before.sockets} -> ${after.sockets}, timers ${before.timers} -> ${after.timers}`,
      );
      // Every request answered, never a 500: 502 (all four engines failed).
      expect(Object.fromEntries(statuses)).toEqual({ 502: REQUESTS });
      // Sockets and timers back to where they were.
      expect(after.sockets).toBeLessThanOrEqual(before.sockets);
      expect(after.timers).toBeLessThanOrEqual(before.timers);
      // Memory: no per-call leak (10 KB kept per call would be 20 MB here). RSS keeps the allocator's
      // high-water mark of the 5 MB bodies read concurrently, so its bound is looser.
      expect(after.heapUsed + after.external - before.heapUsed - before.external).toBeLessThan(16 * 1024 * 1024);
      expect(after.rss - before.rss).toBeLessThan(128 * 1024 * 1024);
    });
  });
});
