import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import { createAdmissionBatcher, PATIENCE_MS } from '../../src/limits/batch.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const rate = (text: string): Rate => parseRate(text) as Rate;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

/** A pool that counts the statements sent through it. */
function countingPool(url: string): { pool: pg.Pool; statements: () => number } {
  const pool = createPool(url, { max: 10 });
  let n = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    n++;
    return query(...args);
  };
  return { pool, statements: () => n };
}

describe('admission batches', () => {
  it('decides 100 concurrent requests of one key in a few statements and admits exactly the limit, in arrival order', async () => {
    const { pool, statements } = countingPool(db.url);
    try {
      const batcher = createAdmissionBatcher(pool, { burst: rate('37/min'), sustained: rate('5000/day') });
      const decisions = await Promise.all(Array.from({ length: 100 }, () => batcher.admit(501)));
      expect(decisions.filter((d) => d.admitted)).toHaveLength(37);
      // Arrival order: every admitted request came before every refused one.
      expect(decisions.findIndex((d) => !d.admitted)).toBe(37);
      expect(decisions.slice(37).every((d) => d.burst.exceeded && d.burst.remaining === 0)).toBe(true);
      // Requests that arrive in one turn of the event loop share one statement.
      expect(statements()).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('decides the requests of many keys in one statement, each key against its own windows', async () => {
    const { pool, statements } = countingPool(db.url);
    try {
      const batcher = createAdmissionBatcher(pool, { burst: rate('3/min'), sustained: rate('5000/day') });
      // 40 keys, 5 requests each, interleaved; keys given in descending order (locked ascending).
      const keys = Array.from({ length: 40 }, (_, i) => 740 - i);
      const asked = Array.from({ length: 200 }, (_, i) => keys[i % 40]!);
      const decisions = await Promise.all(asked.map((key) => batcher.admit(key)));
      for (const key of keys) {
        const mine = decisions.filter((_, i) => asked[i] === key);
        expect(mine.map((d) => d.admitted)).toEqual([true, true, true, false, false]);
        expect(mine.map((d) => d.burst.remaining)).toEqual([2, 1, 0, 0, 0]);
      }
      expect(statements()).toBe(1);
      // Arriving while that statement is in flight: decided by the next one, after it.
      const first = batcher.admit(800);
      const second = batcher.admit(801);
      await new Promise((r) => setImmediate(r));
      const third = batcher.admit(800);
      const [a, b, c] = await Promise.all([first, second, third]);
      expect([a.burst.remaining, b.burst.remaining, c.burst.remaining]).toEqual([2, 2, 1]);
      expect(statements()).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('keeps keys apart and still shares one budget with another instance', async () => {
    const a = countingPool(db.url);
    const b = countingPool(db.url);
    try {
      const limits = { burst: rate('1000/min'), sustained: rate('25/day') };
      const one = createAdmissionBatcher(a.pool, limits);
      const two = createAdmissionBatcher(b.pool, limits);
      const decisions = await Promise.all(
        Array.from({ length: 80 }, (_, i) => (i % 2 ? one : two).admit(i % 4 < 2 ? 601 : 602)),
      );
      const admittedFor = (key: number) =>
        decisions.filter((d, i) => d.admitted && (i % 4 < 2 ? 601 : 602) === key).length;
      expect(admittedFor(601)).toBe(25);
      expect(admittedFor(602)).toBe(25);
    } finally {
      await Promise.all([a.pool.end(), b.pool.end()]);
    }
  });

  it('rejects every request of a batch when the database fails, and decides the next ones afresh', async () => {
    const { pool } = countingPool('postgres://nobody:x@127.0.0.1:1/none');
    try {
      const batcher = createAdmissionBatcher(pool, { burst: rate('10/min'), sustained: rate('10/day') });
      const results = await Promise.allSettled([batcher.admit(1), batcher.admit(1), batcher.admit(1)]);
      expect(results.every((r) => r.status === 'rejected')).toBe(true);
      await expect(batcher.admit(1)).rejects.toBeTruthy();
    } finally {
      await pool.end();
    }
  });
});

describe('patient admissions (their work already runs ahead)', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('wait a few milliseconds for company: requests spread over that time share one statement', async () => {
    const { pool, statements } = countingPool(db.url);
    try {
      const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
      const pending: Promise<unknown>[] = [];
      const started = Date.now();
      for (let i = 0; i < 5; i++) {
        pending.push(batcher.admit(900 + i, undefined, true));
        await sleep(1);
      }
      expect(statements()).toBe(0);
      const decisions = (await Promise.all(pending)) as { admitted: boolean }[];
      expect(decisions.every((d) => d.admitted)).toBe(true);
      expect(statements()).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(PATIENCE_MS - 1);
    } finally {
      await pool.end();
    }
  });

  it('go at once with an impatient request, or when hurried', async () => {
    const { pool, statements } = countingPool(db.url);
    try {
      const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
      const patient = batcher.admit(910, undefined, true);
      await new Promise((r) => setImmediate(r));
      expect(statements()).toBe(0);
      const impatient = batcher.admit(911);
      await new Promise((r) => setImmediate(r));
      expect(statements()).toBe(1);
      await Promise.all([patient, impatient]);

      const hurried = batcher.admit(912, undefined, true);
      await new Promise((r) => setImmediate(r));
      expect(statements()).toBe(1);
      batcher.hurry();
      await new Promise((r) => setImmediate(r));
      expect(statements()).toBe(2);
      await hurried;
    } finally {
      await pool.end();
    }
  });

  it('hurried while a statement is in flight: the next statement follows it at once', async () => {
    const { pool, statements } = countingPool(db.url);
    try {
      const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
      const first = batcher.admit(920);
      await new Promise((r) => setImmediate(r));
      expect(statements()).toBe(1);
      // Arrives (patiently) while the first statement is in flight, then its work is done.
      const second = batcher.admit(921, undefined, true);
      batcher.hurry();
      await first;
      // Sent as soon as the first came back (not after waiting out the patience).
      expect(statements()).toBe(2);
      await second;
    } finally {
      await pool.end();
    }
  });
});
