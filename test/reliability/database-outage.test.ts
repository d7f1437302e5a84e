import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type DbProxy, type DbProxyMode, startDbProxy } from '../helpers/db-proxy.js';
import { listen } from '../helpers/server.js';

/*
 * Issue 17, item 2 (README, database outages): the database goes away while the
 * server runs and takes traffic, through a real TCP proxy between the app's
 * pool and PostgreSQL (test/helpers/db-proxy.ts), in three ways: connections
 * refused, connections reset mid-query, and a black hole. One app lives
 * through all three, never rebuilt:
 *   - /up stays 200;
 *   - /status/health answers 500 {"status":"error","detail":"database unavailable"} (by its own
 *     deadline: health-endpoints.test.ts proves it against a database that never answers);
 *   - API requests (web search, /api/v1/key/, a key not in the auth cache,
 *     an unknown key) answer 503 {"detail": …} with Retry-After, never hanging (how
 *     soon is printed with the figures, not asserted: the machine's load moves it);
 *   - everything answers 200 again once the database is back;
 *   - the monthly usage of every request answered 200 before (still buffered
 *     when the outage began) and after the outage is written exactly once.
 */

/** How long each outage lasts while traffic keeps coming (several 1 s usage flushes fail meanwhile). */
const OUTAGE_MS = 3000;

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  contentType: string | null;
  body: unknown;
}

let db: TestDatabase;
let fakes: WebFakes;
let proxy: DbProxy;
let pool: pg.Pool;
let app: FastifyInstance;
let base: string;
let userCount = 0;

/** Units expected in usage_monthly per user: one per web search (one engine) answered 200. */
const expected = new Map<number, number>();
let requestsSent = 0;
const figures: string[] = [];

interface Client {
  userId: number;
  auth: Record<string, string>;
}

async function newClient(): Promise<Client> {
  const user = await createUser(db.pool, { username: `outage${++userCount}` });
  const { key } = await issueApiKey(db.pool, user.id);
  expected.set(user.id, 0);
  return { userId: user.id, auth: { authorization: `Api-Key ${key}` } };
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  requestsSent++;
  const started = performance.now();
  const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (e.g. /up)
  }
  return {
    status: res.status,
    ms: performance.now() - started,
    retryAfter: res.headers.get('retry-after'),
    contentType: res.headers.get('content-type'),
    body,
  };
}

let queryNo = 0;
/** A web search on one engine (one unit of usage when answered 200), counted in `expected`. */
async function search(client: Client): Promise<Answer> {
  const answer = await get(`/api/v1/web/?q=outage+${++queryNo}&engine=provider_01`, client.auth);
  if (answer.status === 200) expected.set(client.userId, (expected.get(client.userId) ?? 0) + 1);
  return answer;
}

let slowestUnavailableMs = 0;

function expectUnavailable(answer: Answer, what: string) {
  slowestUnavailableMs = Math.max(slowestUnavailableMs, answer.ms);
  const context = `${what}: ${JSON.stringify(answer)}`;
  expect(answer.status, context).toBe(503);
  expect(answer.retryAfter, context).toMatch(/^[1-9][0-9]*$/);
  expect(answer.contentType, context).toMatch(/^application\/json/);
  expect(answer.body, context).toEqual({ detail: expect.any(String) });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  proxy = await startDbProxy(db.url);
  pool = createPool(proxy.url, { max: 10 });
  app = await buildApp(testConfig({ url: proxy.url }, { ...fakes.env, API_THROTTLE_BURST: '100000/min' }), {
    pool,
    logger: false,
  });
  base = await listen(app);
});

afterAll(async () => {
  await proxy?.setMode('pass');
  await app?.close();
  await pool?.end().catch(() => {});
  await proxy?.close();
  await fakes?.close();
  await db?.drop();
  if (figures.length) console.info(`database outage figures:\n  ${figures.join('\n  ')}`);
});

afterEach(async () => {
  // A failed test must not leave the next one in its outage.
  await proxy.setMode('pass');
});

describe('database outage while the server runs (one app through every kind)', () => {
  const kinds: DbProxyMode[] = ['refuse', 'reset', 'blackhole'];

  it.each(kinds)(
    'database %s: /up 200, health 500, API 503 with Retry-After, then recovers and counts usage exactly once',
    async (kind) => {
      const steady = await newClient(); // used before the outage: its key is in the auth cache
      const fresh = await newClient(); // first used during the outage: not in the auth cache
      // A well-formed key with no row (a new prefix each time: a lookup's "no such key" is cached too).
      const unknown = {
        authorization: `Api-Key svc_sk_${randomBytes(4).toString('hex')}.${randomBytes(32).toString('base64url')}`,
      };
      const sentBefore = requestsSent;
      slowestUnavailableMs = 0;

      // Before: all well. A busy server's pool: every connection open (idle when the outage begins).
      expect((await get('/status/health')).status).toBe(200);
      expect((await get('/api/v1/key/', steady.auth)).status).toBe(200);
      await Promise.all(Array.from({ length: 10 }, () => pool.query('SELECT pg_sleep(0.05)')));
      const idleAtStart = pool.idleCount;
      // Concurrent searches, all answered 200; the outage begins as the last one answers.
      const before = await Promise.all(Array.from({ length: 8 }, () => search(steady)));
      expect(before.map((a) => a.status)).toEqual(Array(8).fill(200));

      // The outage begins: every search answered so far was counted as it was admitted.
      await proxy.setMode(kind);
      const outageStarted = performance.now();
      const writtenAtStart = await monthlySearches(db.pool, steady.userId);
      expect(writtenAtStart, 'every answered search counted before its answer').toBe(expected.get(steady.userId)!);

      // A provider health observation written during the outage: the write must fail quietly, never
      // crash the process (an 'error' on a checked-out connection) nor hang.
      app.health.recorder.record({ provider: 'provider_01', ok: true, latencyMs: 5, source: 'query' });
      const healthWrite = app.health.recorder.flush();

      // Liveness knows nothing of the database.
      const up = await get('/up');
      expect(up.status).toBe(200);
      expect(up.body).toBe('OK');

      // The roll-up, past its 200 ms read cache.
      await sleep(300);
      const health = await get('/status/health');
      expect(health.status, JSON.stringify(health)).toBe(500);
      expect(health.body).toEqual({ status: 'error', detail: 'database unavailable' });

      // API traffic throughout the outage: never 500, never hanging, never 401 for a valid key.
      let rounds = 0;
      while (performance.now() - outageStarted < OUTAGE_MS || rounds < 2) {
        rounds++;
        const [web, key, freshWeb, unknownKey, noKey, upAgain, ...later] = await Promise.all([
          search(steady),
          get('/api/v1/key/', steady.auth),
          search(fresh),
          get('/api/v1/', unknown),
          get('/api/v1/'),
          get('/up'),
          // More of the same key while its first statement is still waiting on the database.
          ...[400, 800, 1200].map((ms) => sleep(ms).then(() => search(steady))),
        ]);
        for (const [i, answer] of later.entries()) {
          expectUnavailable(answer, `round ${rounds}: web search ${i + 2} of the same key`);
        }
        expectUnavailable(web, `round ${rounds}: web search, key in the auth cache`);
        expectUnavailable(key, `round ${rounds}: /api/v1/key/`);
        expectUnavailable(freshWeb, `round ${rounds}: web search, key not in the auth cache`);
        expectUnavailable(unknownKey, `round ${rounds}: unknown key`);
        // No key at all needs no database: still the 401 it always is.
        expect(noKey.status).toBe(401);
        expect(upAgain.status).toBe(200);
        await sleep(50);
      }

      // Settles (bounded by the pool's query bound and its connection timeout), never throws.
      await healthWrite;

      // The database comes back; nothing is restarted or rebuilt.
      await proxy.setMode('pass');
      const healed = performance.now();
      let first: Answer | undefined;
      while (performance.now() - healed < 15_000) {
        first = await search(steady);
        if (first.status === 200) break;
        expect(first.status, JSON.stringify(first)).toBe(503);
        await sleep(200);
      }
      expect(first?.status, 'the API answers 200 again by itself').toBe(200);
      const recoveredMs = Math.round(performance.now() - healed);
      await expect.poll(async () => (await get('/status/health')).status, { timeout: 10_000, interval: 200 }).toBe(200);
      const freshAfter = await search(fresh);
      expect(freshAfter.status, JSON.stringify(freshAfter)).toBe(200);
      const unknownAfter = await get('/api/v1/', unknown);
      expect(unknownAfter.status).toBe(401);
      const after = await Promise.all(Array.from({ length: 6 }, () => search(steady)));
      expect(after.map((a) => a.status)).toEqual(Array(6).fill(200));

      // Usage: every 200 (before, during recovery, after) written once; nothing lost, nothing doubled.
      for (const client of [steady, fresh]) {
        const want = expected.get(client.userId)!;
        await expect.poll(() => monthlySearches(db.pool, client.userId), { timeout: 20_000, interval: 200 }).toBe(want);
      }
      await sleep(2500); // a late refund or a double count would show now
      for (const client of [steady, fresh]) {
        expect(await monthlySearches(db.pool, client.userId)).toBe(expected.get(client.userId));
      }
      const keyInfo = await get('/api/v1/key/', steady.auth);
      expect(keyInfo.status).toBe(200);
      expect((keyInfo.body as { usage: { searches: number } }).usage.searches).toBe(expected.get(steady.userId));

      figures.push(
        `${kind}: ${requestsSent - sentBefore} requests, ${rounds} rounds during a ${Math.round(healed - outageStarted)} ms outage, ` +
          `usage ${expected.get(steady.userId)}+${expected.get(fresh.userId)} units expected and written ` +
          `(${writtenAtStart} written when it began; ${idleAtStart} pooled connections), slowest 503 ${Math.round(slowestUnavailableMs)} ms, ` +
          `health 500 in ${Math.round(health.ms)} ms, API 200 again ${recoveredMs} ms after the database returned`,
      );
    },
    120_000,
  );
});
