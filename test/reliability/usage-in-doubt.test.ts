import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import { createPool, IDLE_IN_TRANSACTION_TIMEOUT_MS } from '../../src/db/pool.js';
import { createUsageRecorder, monthlySearches, type UsageRecorder } from '../../src/limits/usage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type DbProxy, startDbProxy } from '../helpers/db-proxy.js';

/*
 * The usage flush when the connection breaks at the worst moments, through a
 * real TCP proxy (test/helpers/db-proxy.ts): after the write reached the
 * database, after the COMMIT did, and with the COMMIT lost in a partition.
 * Whatever happens, each unit is written exactly once: never lost, never
 * doubled. The recorder's timer is off (one hour): every write is a flush
 * the test makes.
 */

const AT = new Date('2031-03-15T12:00:00Z');
const MONTH = '2031-03-01';

let db: TestDatabase;
let proxy: DbProxy;
let pool: pg.Pool;
let recorder: UsageRecorder;
let n = 0;

const newUser = async () => (await createUser(db.pool, { username: `indoubt${++n}` })).id;
/** What usage_monthly holds, read straight from the database (not through the proxy). */
const written = (userId: number) => monthlySearches(db.pool, userId, AT);

beforeAll(async () => {
  db = await createTestDatabase();
  proxy = await startDbProxy(db.url);
  pool = createPool(proxy.url, { max: 4 });
  recorder = createUsageRecorder(pool, { intervalMs: 3_600_000 });
});

afterEach(async () => {
  await proxy.setMode('pass');
});

afterAll(async () => {
  recorder?.stop();
  await proxy?.setMode('pass');
  await pool?.end().catch(() => {});
  await proxy?.close();
  await db?.drop();
});

/** Flushes until a flush succeeds (the first ones after an outage may still meet broken connections). */
async function flushOnceHealthy(): Promise<void> {
  let last: unknown;
  for (let i = 0; i < 20; i++) {
    try {
      await recorder.flush();
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw last;
}

describe('usage flush across a broken connection', () => {
  it('writes a batch once when the connection breaks after the write reached the database, before COMMIT', async () => {
    const user = await newUser();
    recorder.add(user, 5, AT);
    await proxy.setMode('reset', { after: /usage_monthly/ });
    await expect(recorder.flush()).rejects.toThrow();
    expect(proxy.stats.cutAfter.at(-1), 'the write itself was delivered').toContain('usage_monthly');
    expect(recorder.pending(user, MONTH)).toBe(5);

    await proxy.setMode('pass');
    await flushOnceHealthy();
    expect(await written(user)).toBe(5);
    expect(recorder.pending(user, MONTH)).toBe(0);
    await recorder.flush();
    expect(await written(user)).toBe(5);
  });

  it('writes a batch once when its COMMIT reached the database and the answer was lost', async () => {
    const user = await newUser();
    recorder.add(user, 7, AT);
    await proxy.setMode('reset', { after: /COMMIT/ });
    await expect(recorder.flush()).rejects.toThrow();
    expect(proxy.stats.cutAfter.at(-1), 'the COMMIT was delivered').toContain('COMMIT');
    // Committed (the database gets to it a moment after the app saw the reset); here it is
    // still counted as pending, once.
    await expect.poll(() => written(user), { timeout: 5000, interval: 50 }).toBe(7);
    expect(recorder.pending(user, MONTH)).toBe(7);
    recorder.add(user, 2, AT); // arrives while the batch is in doubt
    expect(recorder.pending(user, MONTH)).toBe(9);

    await proxy.setMode('pass');
    await flushOnceHealthy();
    expect(await written(user)).toBe(9);
    expect(recorder.pending(user, MONTH)).toBe(0);
    await recorder.flush();
    expect(await written(user)).toBe(9);
  });

  it('writes a batch once when its COMMIT reached the database and a partition swallowed the answer', async () => {
    const user = await newUser();
    recorder.add(user, 6, AT);
    await proxy.setMode('blackhole', { after: /COMMIT/, deliver: true });
    const started = performance.now();
    await expect(recorder.flush()).rejects.toThrow(); // the pool's client-side bound, not forever
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(proxy.stats.partitionAt.at(-1)).toContain('COMMIT');
    expect(recorder.pending(user, MONTH)).toBe(6);
    // Still partitioned: the doubt cannot be settled, nothing is lost or written twice.
    await expect(recorder.flush()).rejects.toThrow();
    expect(recorder.pending(user, MONTH)).toBe(6);

    await proxy.setMode('pass');
    await flushOnceHealthy();
    expect(await written(user)).toBe(6);
    expect(recorder.pending(user, MONTH)).toBe(0);
  });

  it('writes a batch once when a partition swallowed its COMMIT, and the orphaned transaction does not block other writers', async () => {
    const user = await newUser();
    recorder.add(user, 4, AT);
    await proxy.setMode('blackhole', { after: /COMMIT/ });
    const flushing = recorder.flush().then(
      () => 'resolved',
      () => 'rejected',
    );
    await expect.poll(() => proxy.stats.partitionAt.length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
    expect(proxy.stats.partitionAt.at(-1)).toContain('COMMIT');

    // Another instance (straight to the database) counts the same user and month meanwhile. The
    // orphaned transaction holds that row until the server gives up on it; it must not hold it
    // until the statement timeout (10 s) makes the other instance's write fail.
    const other = createUsageRecorder(db.pool, { intervalMs: 3_600_000 });
    try {
      other.add(user, 3, AT);
      const started = performance.now();
      await other.flush();
      const waited = performance.now() - started;
      expect(waited).toBeLessThan(IDLE_IN_TRANSACTION_TIMEOUT_MS + 4000);
    } finally {
      other.stop();
    }
    expect(await written(user)).toBe(3);
    expect(await flushing).toBe('rejected');
    expect(recorder.pending(user, MONTH)).toBe(4);

    await proxy.setMode('pass');
    await flushOnceHealthy();
    expect(await written(user)).toBe(7);
    expect(recorder.pending(user, MONTH)).toBe(0);
    await recorder.flush();
    expect(await written(user)).toBe(7);
  });
}, 120_000);
