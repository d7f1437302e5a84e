import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { createRunAheadHints, MAX_UNITS_PER_REQUEST, QUOTA_MARGIN_UNITS } from '../../src/limits/run-ahead.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { type BraveFake, startBraveFake } from '../fakes/brave.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

describe('run-ahead hints', () => {
  const roomy = { rate: 10, quotaUnits: Number.POSITIVE_INFINITY };

  it('lets the first request of a key wait for its decision', () => {
    const hints = createRunAheadHints();
    expect(hints.start(1, true)).toBe(false);
    hints.settle(1, roomy);
    expect(hints.start(1, true)).toBe(true);
    expect(hints.start(2, true)).toBe(false);
  });

  it('lets requests run ahead while the known room covers every request of the key awaiting its decision', () => {
    const hints = createRunAheadHints();
    hints.start(1, false);
    hints.settle(1, { rate: 3, quotaUnits: Number.POSITIVE_INFINITY });
    // Three slots left: three requests may run ahead together, the fourth waits for its decision.
    expect([1, 2, 3, 4].map(() => hints.start(1, true))).toEqual([true, true, true, false]);
    // Decided in order: the first took a slot (2 left) while three are still undecided.
    hints.settle(1, { rate: 2 });
    expect(hints.start(1, true)).toBe(false);
    hints.settle(1, { rate: 1 });
    hints.settle(1, { rate: 0 });
    hints.settle(1, { rate: 0 });
    hints.settle(1, { rate: 0 });
    // All decided, the last left no room.
    expect(hints.start(1, true)).toBe(false);
  });

  it('keeps the monthly margin for every search awaiting its decision', () => {
    const hints = createRunAheadHints();
    hints.start(1, false);
    hints.settle(1, { rate: 100, quotaUnits: QUOTA_MARGIN_UNITS + 2 * MAX_UNITS_PER_REQUEST });
    expect([1, 2, 3, 4].map(() => hints.start(1, true))).toEqual([true, true, true, false]);
  });

  it('never lets a route that does not ask run ahead', () => {
    const hints = createRunAheadHints();
    hints.start(1, false);
    hints.settle(1, roomy);
    expect(hints.start(1, false)).toBe(false);
  });

  it('stops once a decision leaves no room, taking the smallest headroom of overlapping decisions', () => {
    const hints = createRunAheadHints();
    hints.start(1, false);
    hints.settle(1, roomy);
    hints.start(1, true);
    hints.start(1, false);
    // Out of order: the later statement (no room left) answers first.
    hints.settle(1, { rate: 0 });
    hints.settle(1, { rate: 1 });
    expect(hints.start(1, true)).toBe(false);
    hints.settle(1, { rate: 3 }); // a later, separate decision starts a new estimate
    expect(hints.start(1, true)).toBe(true);
  });

  it('needs a known margin in the monthly quota, kept across decisions that ignore the quota', () => {
    const hints = createRunAheadHints();
    hints.start(1, false);
    hints.settle(1, { rate: 50 }); // the quota was not looked at: unknown
    expect(hints.start(1, true)).toBe(false);
    hints.settle(1, { rate: 50, quotaUnits: QUOTA_MARGIN_UNITS });
    hints.start(1, false);
    hints.settle(1, { rate: 49 }); // e.g. GET /api/v1/key/
    expect(hints.start(1, true)).toBe(true);
    hints.settle(1, { rate: 48, quotaUnits: QUOTA_MARGIN_UNITS - 1 });
    expect(hints.start(1, true)).toBe(false);
  });
});

describe('searches running ahead of the rate limiter', () => {
  let db: TestDatabase;
  let brave: BraveFake;
  let userCount = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    brave = await startBraveFake({ latencyMs: 20 });
  });
  afterAll(async () => {
    await brave.close();
    await db.drop();
  });

  async function newKey(): Promise<{ userId: number; auth: { authorization: string } }> {
    const user = await createUser(db.pool, { username: `ahead${++userCount}` });
    const { key } = await issueApiKey(db.pool, user.id);
    return { userId: user.id, auth: { authorization: `Api-Key ${key}` } };
  }

  async function withApp(env: Record<string, string>, run: (t: TestApp) => Promise<void>): Promise<void> {
    const t = await buildTestApp(db, { BRAVE_API_KEY: brave.key, BRAVE_BASE_URL: brave.baseUrl, ...env });
    try {
      await run(t);
    } finally {
      await t.close();
    }
  }

  const braveSearches = (tag: string) =>
    brave.requestsTo('web').filter((r) => r.query.get('q')?.startsWith(tag)).length;

  it('never asks an engine for a request over the burst limit, however many arrive at once', async () => {
    await withApp({ API_THROTTLE_BURST: '5/min' }, async ({ app }) => {
      const { auth } = await newKey();
      const search = (q: string) => app.inject({ url: `/api/v1/web/?q=${q}&engine=provider_01`, headers: auth });
      expect((await search('flood0')).statusCode).toBe(200);
      const statuses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => search(`flood${i + 1}`).then((r) => r.statusCode)),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(4);
      expect(statuses.filter((s) => s === 429)).toHaveLength(16);
      expect(braveSearches('flood')).toBe(5);
    });
  });

  it('answers 429 and counts nothing when another instance spent the budget while a search ran ahead', async () => {
    await withApp({ API_THROTTLE_BURST: '5/min' }, async (one) => {
      await withApp({ API_THROTTLE_BURST: '5/min' }, async (two) => {
        const { userId, auth } = await newKey();
        const search = (t: TestApp, q: string) =>
          t.app.inject({ url: `/api/v1/web/?q=${q}&engine=provider_01`, headers: auth });
        expect((await search(one, 'shared0')).statusCode).toBe(200); // instance one now knows of room for 4 more
        for (let i = 1; i <= 4; i++) expect((await search(two, `shared${i}`)).statusCode).toBe(200);

        const late = await search(one, 'shared5');
        expect(late.statusCode).toBe(429);
        expect(late.json()).toEqual({ detail: 'Request was throttled. Expected available in 60 seconds.' });
        expect(late.headers['retry-after']).toBe('60');
        // It did run ahead: the engine was asked, but the answer is the limiter's.
        await expect.poll(() => braveSearches('shared5'), { timeout: 2000, interval: 20 }).toBe(1);
        // The decision taught instance one that the budget is spent: nothing runs ahead any more.
        expect((await search(one, 'shared6')).statusCode).toBe(429);
        expect(braveSearches('shared6')).toBe(0);

        await one.app.lifecycle.flush();
        await two.app.lifecycle.flush();
        expect(await monthlySearches(db.pool, userId)).toBe(5);
      });
    });
  });

  it('holds an instant answer found at once until the pending decision, then answers 429 and counts nothing', async () => {
    await withApp({ API_THROTTLE_BURST: '5/min' }, async (one) => {
      await withApp({ API_THROTTLE_BURST: '5/min' }, async (two) => {
        const { userId, auth } = await newKey();
        const ask = (t: TestApp, q: string) =>
          t.app.inject({ url: `/api/v1/instant/?q=${encodeURIComponent(q)}`, headers: auth });
        expect((await ask(one, '1 + 1')).statusCode).toBe(200); // instance one now knows of room for 4 more
        for (let i = 2; i <= 5; i++) expect((await ask(two, `${i} + 1`)).statusCode).toBe(200);

        // Instance one lets this request run ahead: its answer is ready at once, but the decision refuses it.
        const late = await ask(one, '6 + 1');
        expect(late.statusCode).toBe(429);
        expect(late.json()).toEqual({ detail: 'Request was throttled. Expected available in 60 seconds.' });

        await one.app.lifecycle.flush();
        await two.app.lifecycle.flush();
        expect(await monthlySearches(db.pool, userId)).toBe(5);
      });
    });
  });

  it('still puts the 429 before a 400 for invalid parameters while the decision is pending', async () => {
    await withApp({ API_THROTTLE_BURST: '2/min' }, async (one) => {
      await withApp({ API_THROTTLE_BURST: '2/min' }, async (two) => {
        const { auth } = await newKey();
        expect((await one.app.inject({ url: '/api/v1/web/?q=order0', headers: auth })).statusCode).toBe(200);
        expect((await two.app.inject({ url: '/api/v1/web/?q=order1', headers: auth })).statusCode).toBe(200);
        const invalid = await one.app.inject({ url: '/api/v1/web/?q=', headers: auth });
        expect(invalid.statusCode).toBe(429);
        const suggest = await one.app.inject({ url: '/api/v1/suggest/?q=order2', headers: auth });
        expect(suggest.statusCode).toBe(429);
      });
    });
  });

  it('never asks an engine once the monthly quota is used up', async () => {
    await withApp({ API_MONTHLY_QUOTA: '2' }, async ({ app }) => {
      const { auth } = await newKey();
      const search = (q: string) => app.inject({ url: `/api/v1/web/?q=${q}&engine=provider_01`, headers: auth });
      expect((await search('quota0')).statusCode).toBe(200);
      expect((await search('quota1')).statusCode).toBe(200);
      const over = await search('quota2');
      expect(over.statusCode).toBe(429);
      expect(over.json().detail).toMatch(/^Monthly search quota exhausted\./);
      expect(braveSearches('quota')).toBe(2);
    });
  });
});
