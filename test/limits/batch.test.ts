import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import { createAdmissionBatcher } from '../../src/limits/batch.js';
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
      // The first request goes alone; the 99 that arrived meanwhile share the next statement.
      expect(statements()).toBe(2);
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
