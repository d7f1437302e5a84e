import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { nextMonthStart } from '../../src/limits/month.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { startBraveFake } from '../fakes/brave.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

let db: TestDatabase;
let userCount = 0;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

/** A new user with one key: returns the user id and the Authorization header. */
async function newKey(): Promise<{ userId: number; auth: { authorization: string } }> {
  const user = await createUser(db.pool, { username: `limits${++userCount}` });
  const { key } = await issueApiKey(db.pool, user.id);
  return { userId: user.id, auth: { authorization: `Api-Key ${key}` } };
}

async function withApp(env: Record<string, string>, run: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await buildTestApp(db, env);
  try {
    await run(t);
  } finally {
    await t.close();
  }
}

const thisMonth = () => new Date().toISOString().slice(0, 7);
const nextMonth = () => nextMonthStart(new Date()).toISOString().slice(0, 10);

describe('rate limits over HTTP', () => {
  it('answers the request over the burst limit with the exact 429 body, Retry-After and RateLimit headers', async () => {
    await withApp({ API_THROTTLE_BURST: '3/min' }, async ({ app }) => {
      const { auth } = await newKey();
      const policy = '"burst";q=3;w=60, "sustained";q=5000;w=86400';
      for (const remaining of [2, 1, 0]) {
        const ok = await app.inject({ url: '/api/v1/', headers: auth });
        expect(ok.statusCode).toBe(200);
        expect(ok.headers['ratelimit-policy']).toBe(policy);
        expect(ok.headers.ratelimit).toBe(`"burst";r=${remaining};t=60`);
      }
      const res = await app.inject({ url: '/api/v1/', headers: auth });
      expect(res.statusCode).toBe(429);
      expect(res.body).toBe('{"detail":"Request was throttled. Expected available in 60 seconds."}');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.headers['ratelimit-policy']).toBe(policy);
      expect(res.headers.ratelimit).toBe('"burst";r=0;t=60');
    });
  });

  it('says "1 second." when the wait is one second', async () => {
    await withApp({ API_THROTTLE_BURST: '1/s' }, async ({ app }) => {
      const { auth } = await newKey();
      expect((await app.inject({ url: '/api/v1/key/', headers: auth })).statusCode).toBe(200);
      const res = await app.inject({ url: '/api/v1/key/', headers: auth });
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual({ detail: 'Request was throttled. Expected available in 1 second.' });
      expect(res.headers['retry-after']).toBe('1');
      await new Promise((r) => setTimeout(r, 1100));
      expect((await app.inject({ url: '/api/v1/key/', headers: auth })).statusCode).toBe(200);
    });
  });

  it('enforces the sustained limit too, naming it in RateLimit', async () => {
    await withApp({ API_THROTTLE_BURST: '100/min', API_THROTTLE_SUSTAINED: '2/day' }, async ({ app }) => {
      const { auth } = await newKey();
      const first = await app.inject({ url: '/api/v1/', headers: auth });
      expect(first.headers.ratelimit).toBe('"sustained";r=1;t=86400');
      await app.inject({ url: '/api/v1/', headers: auth });
      const res = await app.inject({ url: '/api/v1/', headers: auth });
      expect(res.statusCode).toBe(429);
      expect(res.body).toBe('{"detail":"Request was throttled. Expected available in 86400 seconds."}');
      expect(res.headers['retry-after']).toBe('86400');
      expect(res.headers['ratelimit-policy']).toBe('"burst";q=100;w=60, "sustained";q=2;w=86400');
      expect(res.headers.ratelimit).toBe('"sustained";r=0;t=86400');
    });
  });

  it('counts every authenticated request (root, key/, unknown paths, invalid parameters) but not rejected keys', async () => {
    await withApp({ API_THROTTLE_BURST: '5/min' }, async ({ app }) => {
      const { auth } = await newKey();
      expect((await app.inject({ url: '/api/v1/', headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/v1/status/', headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/v1/key/', headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/v1/no-such-endpoint/', headers: auth })).statusCode).toBe(404);
      expect((await app.inject({ url: '/api/v1/suggest/', headers: auth })).statusCode).toBe(400);
      const anonymous = await app.inject({ url: '/api/v1/' });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.headers.ratelimit).toBeUndefined();
      const over = await app.inject({ url: '/api/v1/suggest/?q=x', headers: auth });
      expect(over.statusCode).toBe(429);
      // An unauthenticated request never reaches the limiter: 401, never 429.
      expect(
        (await app.inject({ url: '/api/v1/', headers: { authorization: 'Api-Key svc_sk_nope.nope' } })).statusCode,
      ).toBe(401);
    });
  });

  it('keeps a separate budget per API key', async () => {
    await withApp({ API_THROTTLE_BURST: '1/min' }, async ({ app }) => {
      const { userId, auth } = await newKey();
      const { key: second } = await issueApiKey(db.pool, userId, 'second');
      expect((await app.inject({ url: '/api/v1/', headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/v1/', headers: auth })).statusCode).toBe(429);
      expect((await app.inject({ url: '/api/v1/', headers: { authorization: `Api-Key ${second}` } })).statusCode).toBe(
        200,
      );
    });
  });

  it('admits exactly the burst limit among 200 concurrent requests on one key', async () => {
    await withApp({ API_THROTTLE_BURST: '50/min' }, async ({ app }) => {
      const { auth } = await newKey();
      const base = await listen(app);
      const statuses = await Promise.all(
        Array.from({ length: 200 }, () => fetch(`${base}/api/v1/`, { headers: auth }).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(50);
      expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    });
  });

  it('shares the budget between two app instances on one database', async () => {
    await withApp({ API_THROTTLE_BURST: '30/min' }, async (one) => {
      await withApp({ API_THROTTLE_BURST: '30/min' }, async (two) => {
        const { auth } = await newKey();
        const bases = [await listen(one.app), await listen(two.app)];
        const statuses = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            fetch(`${bases[i % 2]}/api/v1/key/`, { headers: auth }).then((r) => r.status),
          ),
        );
        expect(statuses.filter((s) => s === 200)).toHaveLength(30);
        expect(statuses.filter((s) => s === 429)).toHaveLength(70);
      });
    });
  });

  it('answers 503 with Retry-After, never 500, when the limiter cannot reach its table, and recovers', async () => {
    await withApp({}, async ({ app }) => {
      const { auth } = await newKey();
      expect((await app.inject({ url: '/api/v1/', headers: auth })).statusCode).toBe(200); // key now cached
      await db.pool.query('ALTER TABLE rate_limits RENAME TO rate_limits_unavailable');
      try {
        const res = await app.inject({ url: '/api/v1/', headers: auth });
        expect(res.statusCode).toBe(503);
        expect(res.body).toBe('{"detail":"Service temporarily unavailable."}');
        expect(res.headers['retry-after']).toBe('5');
      } finally {
        await db.pool.query('ALTER TABLE rate_limits_unavailable RENAME TO rate_limits');
      }
      expect((await app.inject({ url: '/api/v1/', headers: auth })).statusCode).toBe(200);
    });
  });
});

describe('monthly usage', () => {
  it('counts suggest 1, web one per engine in scope, and nothing for root, key/, 4xx or throttled requests', async () => {
    const brave = await startBraveFake();
    const engine = { BRAVE_API_KEY: brave.key, BRAVE_BASE_URL: brave.baseUrl };
    await withApp({ API_THROTTLE_BURST: '10/min', ...engine }, async ({ app }) => {
      const { userId, auth } = await newKey();
      const get = (url: string) => app.inject({ url, headers: auth });
      expect((await get('/api/v1/suggest/?q=hello')).statusCode).toBe(200); // +1
      expect((await get('/api/v1/web/?q=hello')).statusCode).toBe(200); // +4 (all four engines in scope)
      expect((await get('/api/v1/web/?q=hello&engine=provider_01,provider_03')).statusCode).toBe(200); // +2
      expect((await get('/api/v1/')).statusCode).toBe(200); // 0
      expect((await get('/api/v1/status/')).statusCode).toBe(200); // 0
      expect((await get('/api/v1/suggest/')).statusCode).toBe(400); // 0
      expect((await get('/api/v1/web/?q=x&engine=nope')).statusCode).toBe(400); // 0
      expect((await get('/api/v1/nothing-here/')).statusCode).toBe(404); // 0
      const key = await get('/api/v1/key/'); // 0, and it sees the buffered count
      expect(key.json().usage.searches).toBe(7);
      expect((await get('/api/v1/suggest/?q=hello')).statusCode).toBe(200); // +1 (10th request)
      expect((await get('/api/v1/suggest/?q=hello')).statusCode).toBe(429); // throttled: 0
      await app.lifecycle.flush();
      expect(await monthlySearches(db.pool, userId)).toBe(8);
    }).finally(() => brave.close());
  });

  it('has counted the search in the database by the time the answer arrives', async () => {
    await withApp({}, async ({ app }) => {
      const { userId, auth } = await newKey();
      const res = await app.inject({ url: '/api/v1/suggest/?q=a', headers: auth });
      expect(res.statusCode).toBe(200);
      expect(await monthlySearches(db.pool, userId)).toBe(1);
    });
  });

  it('loses nothing when the app closes with requests in flight', async () => {
    const brave = await startBraveFake({ latencyMs: 300 });
    try {
      const t = await buildTestApp(db, { BRAVE_API_KEY: brave.key, BRAVE_BASE_URL: brave.baseUrl });
      const { userId, auth } = await newKey();
      const base = await listen(t.app);
      const inFlight = Array.from({ length: 10 }, (_, i) =>
        fetch(`${base}/api/v1/web/?q=flight${i}&engine=provider_01`, { headers: auth }).then((r) => r.status),
      );
      await expect.poll(() => brave.requestsTo('web').length, { timeout: 2000, interval: 10 }).toBe(10);
      await t.close(); // waits for the 10 requests, then flushes; the periodic flush had no chance to run
      expect(await Promise.all(inFlight)).toEqual(Array(10).fill(200));
      expect(await monthlySearches(db.pool, userId)).toBe(10);
    } finally {
      await brave.close();
    }
  });
});

describe('monthly quota', () => {
  it('refuses counting endpoints once the quota is used, with the reset date, and keeps root and key/ open', async () => {
    const env = { API_MONTHLY_QUOTA: '3' };
    const { userId, auth } = await newKey();
    await withApp(env, async ({ app }) => {
      for (let i = 0; i < 3; i++) {
        expect((await app.inject({ url: '/api/v1/suggest/?q=q', headers: auth })).statusCode).toBe(200);
      }
      // Still unflushed: the check adds this instance's buffered count.
      const res = await app.inject({ url: '/api/v1/suggest/?q=q', headers: auth });
      expect(res.statusCode).toBe(429);
      expect(res.body).toBe(`{"detail":"Monthly search quota exhausted. It resets on ${nextMonth()}."}`);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect((await app.inject({ url: '/api/v1/web/?q=q', headers: auth })).statusCode).toBe(429);
      expect((await app.inject({ url: '/api/v1/', headers: auth })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/v1/status/', headers: auth })).statusCode).toBe(200);
      const key = await app.inject({ url: '/api/v1/key/', headers: auth });
      expect(key.statusCode).toBe(200);
      expect(key.json().usage).toEqual({
        month: thisMonth(),
        searches: 3,
        quota: 3,
        resets_at: `${nextMonth()}T00:00:00Z`,
      });
    });
    expect(await monthlySearches(db.pool, userId)).toBe(3);
    // Another instance, with an empty buffer, refuses from the persisted count.
    await withApp(env, async ({ app }) => {
      expect((await app.inject({ url: '/api/v1/suggest/?q=q', headers: auth })).statusCode).toBe(429);
    });
  });
});

describe('GET /api/v1/key/', () => {
  it('adds usage and limits with what remains after this request', async () => {
    await withApp({ API_THROTTLE_BURST: '5/min', API_THROTTLE_SUSTAINED: '100/h' }, async ({ app }) => {
      const { auth } = await newKey();
      await app.inject({ url: '/api/v1/', headers: auth });
      const res = await app.inject({ url: '/api/v1/key/', headers: auth });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ name: 'API key', revoked: false });
      expect(body.usage).toEqual({
        month: thisMonth(),
        searches: 0,
        quota: null,
        resets_at: `${nextMonth()}T00:00:00Z`,
      });
      expect(body.limits).toEqual({
        burst: { limit: 5, window_seconds: 60, remaining: 3 },
        sustained: { limit: 100, window_seconds: 3600, remaining: 98 },
      });
    });
  });
});
