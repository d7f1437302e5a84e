import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryingDeadlocks } from '../../src/db/deadlock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/* A statement that loses a deadlock is run again (src/db/deadlock.ts), against PostgreSQL's own errors. */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Raises PostgreSQL's own error of `code` the first `times` calls, then answers. */
function failing(code: string, times: number) {
  let calls = 0;
  const statement = async () => {
    calls++;
    const raise = calls <= times;
    await db.pool.query(
      `DO $$ BEGIN IF ${raise} THEN RAISE EXCEPTION 'lost' USING ERRCODE = '${code}'; END IF; END $$`,
    );
    return calls;
  };
  return { statement, calls: () => calls };
}

describe('a statement that loses a deadlock', () => {
  it('is run again, and its answer is the one of the run that won', async () => {
    const s = failing('40P01', 1);
    expect(await retryingDeadlocks(s.statement)).toBe(2);
  });

  it('gives up after three runs, with the error', async () => {
    const s = failing('40P01', 5);
    await expect(retryingDeadlocks(s.statement)).rejects.toMatchObject({ code: '40P01' });
    expect(s.calls()).toBe(3);
  });

  it('is not run again for any other error', async () => {
    const s = failing('23505', 1);
    await expect(retryingDeadlocks(s.statement)).rejects.toMatchObject({ code: '23505' });
    expect(s.calls()).toBe(1);
  });
});
