import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import { admitBatch, admitRequest, pruneIdleRateLimits } from '../../src/limits/rate-limiter.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

function rate(text: string): Rate {
  const r = parseRate(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

const limits = (burst: string, sustained: string) => ({ burst: rate(burst), sustained: rate(sustained) });

let db: TestDatabase;
let nextKey = 1000;
const freshKey = () => nextKey++;

/** Moves every bucket of a key's windows `seconds` into the past, as if that much time had gone by. */
async function age(pool: pg.Pool, keyId: number, seconds: number, only?: 'burst' | 'sustained') {
  const shift = (window: 'burst' | 'sustained') => {
    const w = window[0];
    return !only || only === window
      ? `${w}_last = ARRAY(SELECT t - $2 FROM unnest(${w}_last) AS t), ${w}_head = ${w}_head - $2, ${w}_cur_last = ${w}_cur_last - $2`
      : `${w}_last = ${w}_last`;
  };
  await pool.query(`UPDATE rate_limits SET ${shift('burst')}, ${shift('sustained')} WHERE key_id = $1`, [
    keyId,
    seconds,
  ]);
}

async function admitMany(pool: pg.Pool, keyId: number, l: ReturnType<typeof limits>, n: number) {
  const decisions = [];
  for (let i = 0; i < n; i++) decisions.push(await admitRequest(pool, keyId, l));
  return decisions;
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

describe('rate limiter (bucketed sliding windows in Postgres)', () => {
  it('admits exactly `limit` requests in a window, then refuses with the wait until the oldest leaves', async () => {
    const key = freshKey();
    const l = limits('3/min', '100/day');
    const decisions = await admitMany(db.pool, key, l, 4);
    expect(decisions.map((d) => d.admitted)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.burst.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions.map((d) => d.sustained.remaining)).toEqual([99, 98, 97, 97]);
    const refused = decisions[3]!;
    expect(refused.burst.exceeded).toBe(true);
    expect(refused.sustained.exceeded).toBe(false);
    expect(refused.burst.resetSeconds).toBeGreaterThan(55);
    expect(refused.burst.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('slides: a slot frees when the oldest request leaves the window, not at a fixed boundary', async () => {
    const key = freshKey();
    const l = limits('2/min', '100/day');
    await admitRequest(db.pool, key, l);
    await age(db.pool, key, 40); // first request 40 s ago
    expect((await admitRequest(db.pool, key, l)).admitted).toBe(true); // second now
    const full = await admitRequest(db.pool, key, l);
    expect(full.admitted).toBe(false);
    // The oldest entry (40 s old) frees its slot in about 20 s.
    expect(full.burst.resetSeconds).toBeGreaterThan(15);
    expect(full.burst.resetSeconds).toBeLessThanOrEqual(20);

    await age(db.pool, key, 25); // first is 65 s old (expired), second 25 s old (still in)
    expect((await admitRequest(db.pool, key, l)).admitted).toBe(true);
    // A fixed window would now allow a second one; the sliding log does not.
    const again = await admitRequest(db.pool, key, l);
    expect(again.admitted).toBe(false);
    expect(again.burst.resetSeconds).toBeGreaterThan(30);
    expect(again.burst.resetSeconds).toBeLessThanOrEqual(35);
  });

  it('applies the sustained limit on its own window', async () => {
    const key = freshKey();
    const l = limits('100/min', '3/day');
    await admitMany(db.pool, key, l, 3);
    await age(db.pool, key, 3600); // an hour later: burst window is clear, sustained is not
    const refused = await admitRequest(db.pool, key, l);
    expect(refused.admitted).toBe(false);
    expect(refused.sustained.exceeded).toBe(true);
    expect(refused.burst.exceeded).toBe(false);
    expect(refused.sustained.resetSeconds).toBeGreaterThan(86400 - 3600 - 5);
    expect(refused.sustained.resetSeconds).toBeLessThanOrEqual(86400 - 3600);
    await age(db.pool, key, 86400 - 3600);
    expect((await admitRequest(db.pool, key, l)).admitted).toBe(true);
  });

  it('records a request in neither window when one limit refuses it', async () => {
    const key = freshKey();
    const l = limits('2/min', '5/day');
    await admitMany(db.pool, key, l, 2);
    const refusedByBurst = await admitMany(db.pool, key, l, 3);
    expect(refusedByBurst.every((d) => !d.admitted)).toBe(true);
    // The burst refusals did not spend the sustained budget: 3 more fit once the burst window passes.
    await age(db.pool, key, 61, 'burst');
    const later = await admitMany(db.pool, key, l, 2);
    expect(later.map((d) => d.admitted)).toEqual([true, true]);
    expect(later[1]!.sustained.remaining).toBe(1);
    const { rows } = await db.pool.query('SELECT b_total AS b, s_total AS s FROM rate_limits WHERE key_id = $1', [key]);
    expect(rows[0]).toEqual({ b: 2, s: 4 });
  });

  it('drops expired buckets from the stored windows when it admits', async () => {
    const key = freshKey();
    const l = limits('5/s', '1000/day');
    await admitMany(db.pool, key, l, 5);
    await age(db.pool, key, 2, 'burst');
    await admitRequest(db.pool, key, l);
    const { rows } = await db.pool.query(
      'SELECT cardinality(b_last) + (b_cur_n > 0)::int AS buckets, b_total AS total FROM rate_limits WHERE key_id = $1',
      [key],
    );
    expect(rows[0]).toEqual({ buckets: 1, total: 1 });
  });

  it('decides a batch in order: the first ones both windows have room for are admitted, the rest refused', async () => {
    const key = freshKey();
    const l = limits('3/min', '100/day');
    const decisions = await admitBatch(db.pool, key, l, 5);
    expect(decisions.map((d) => d.admitted)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.burst.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(decisions.map((d) => d.sustained.remaining)).toEqual([99, 98, 97, 97, 97]);
    expect(decisions[4]!.burst.exceeded).toBe(true);
    expect(decisions[4]!.burst.resetSeconds).toBeGreaterThan(55);
    expect(decisions[4]!.burst.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('keeps its stored windows small whatever the limit: 3000 admissions of a 100000/day key fill one bucket per step', async () => {
    const key = freshKey();
    const l = limits('100000/min', '100000/day');
    for (let i = 0; i < 30; i++) await admitBatch(db.pool, key, l, 100);
    const { rows } = await db.pool.query(
      `SELECT s_total AS total, cardinality(s_last) + 1 AS buckets, cardinality(b_last) + 1 AS burst_buckets
         FROM rate_limits WHERE key_id = $1`,
      [key],
    );
    expect(rows[0].total).toBe(3000);
    // 60-second steps for a day, 1-second steps for a minute: a few buckets, not 3000 entries.
    expect(rows[0].buckets).toBeLessThanOrEqual(2);
    expect(rows[0].burst_buckets).toBeLessThanOrEqual(10);
  });

  it('never lets more than the limit into any window: a bucket leaves with its latest admission', async () => {
    const key = freshKey();
    const l = limits('2/min', '100/day');
    await admitRequest(db.pool, key, l); // at T
    await age(db.pool, key, 30);
    await admitRequest(db.pool, key, l); // at T+30, a new bucket
    await age(db.pool, key, 31); // first admission is 61 s old: gone; second 31 s old: still in
    const third = await admitRequest(db.pool, key, l);
    expect(third.admitted).toBe(true);
    expect((await admitRequest(db.pool, key, l)).admitted).toBe(false);
  });

  it('admits exactly the limit among 200 concurrent requests on one key, including its first row', async () => {
    const pool = createPool(db.url, { max: 20 });
    try {
      const key = freshKey();
      const l = limits('37/min', '5000/day');
      const decisions = await Promise.all(Array.from({ length: 200 }, () => admitRequest(pool, key, l)));
      expect(decisions.filter((d) => d.admitted)).toHaveLength(37);
      const { rows } = await pool.query(
        `SELECT b_total AS b, coalesce((SELECT sum(n)::int FROM unnest(b_n) AS n), 0) + b_cur_n AS summed,
                b_last = ARRAY(SELECT t FROM unnest(b_last) AS t ORDER BY t)
                  AND coalesce(b_cur_last >= b_last[cardinality(b_last)], true) AS sorted
           FROM rate_limits WHERE key_id = $1`,
        [key],
      );
      // Buckets stay oldest-first under concurrent admissions, and the cached total matches them.
      expect(rows[0]).toEqual({ b: 37, summed: 37, sorted: true });
    } finally {
      await pool.end();
    }
  });

  it('shares one budget between separate connection pools (instances) on one database', async () => {
    const a = createPool(db.url, { max: 10 });
    const b = createPool(db.url, { max: 10 });
    try {
      const key = freshKey();
      const l = limits('1000/min', '25/day');
      const decisions = await Promise.all(Array.from({ length: 120 }, (_, i) => admitRequest(i % 2 ? a : b, key, l)));
      expect(decisions.filter((d) => d.admitted)).toHaveLength(25);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it('keeps keys apart', async () => {
    const l = limits('1/min', '10/day');
    const k1 = freshKey();
    const k2 = freshKey();
    expect((await admitRequest(db.pool, k1, l)).admitted).toBe(true);
    expect((await admitRequest(db.pool, k1, l)).admitted).toBe(false);
    expect((await admitRequest(db.pool, k2, l)).admitted).toBe(true);
  });

  it('reads the persisted monthly searches in the same statement when asked', async () => {
    const { rows } = await db.pool.query<{ id: string }>(
      "INSERT INTO users (username) VALUES ('limiter-reader') RETURNING id",
    );
    const userId = Number(rows[0]!.id);
    await db.pool.query("INSERT INTO usage_monthly (user_id, month, searches) VALUES ($1, '2031-02-01', 17)", [userId]);
    const l = limits('10/min', '10/day');
    const key = freshKey();
    expect((await admitRequest(db.pool, key, l, { userId, month: '2031-02-01' })).persistedSearches).toBe(17);
    expect((await admitRequest(db.pool, key, l, { userId, month: '2031-03-01' })).persistedSearches).toBe(0);
    expect((await admitRequest(db.pool, key, l)).persistedSearches).toBeNull();
  });

  it('prunes only rows idle for longer than both windows', async () => {
    const l = limits('10/min', '10/h');
    const idle = freshKey();
    const active = freshKey();
    await admitRequest(db.pool, idle, l);
    await admitRequest(db.pool, active, l);
    await db.pool.query("UPDATE rate_limits SET touched_at = now() - interval '2 hours' WHERE key_id = $1", [idle]);
    await db.pool.query("UPDATE rate_limits SET touched_at = now() - interval '30 minutes' WHERE key_id = $1", [
      active,
    ]);
    expect(await pruneIdleRateLimits(db.pool, l)).toBeGreaterThanOrEqual(1);
    const { rows } = await db.pool.query('SELECT key_id FROM rate_limits WHERE key_id = ANY($1)', [[idle, active]]);
    expect(rows.map((r) => Number(r.key_id))).toEqual([active]);
  });
});

describe('rate syntax (DRF)', () => {
  it('reads only the first letter of the period', () => {
    expect(parseRate('3/s')).toEqual({ limit: 3, windowSeconds: 1, text: '3/s' });
    expect(parseRate('10/minute')).toMatchObject({ limit: 10, windowSeconds: 60 });
    expect(parseRate('7/hour')).toMatchObject({ limit: 7, windowSeconds: 3600 });
    expect(parseRate('5000/day')).toMatchObject({ limit: 5000, windowSeconds: 86400 });
    expect(parseRate('2/Mondays')).toMatchObject({ limit: 2, windowSeconds: 60 });
  });

  it('rejects what is not <n>/<period> with a message', () => {
    for (const bad of ['60', '60/', '/min', 'x/min', '60/week', '0/min', '-1/min', '1.5/min']) {
      expect(typeof parseRate(bad), bad).toBe('string');
    }
  });
});
