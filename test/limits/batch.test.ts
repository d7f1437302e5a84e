import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import {
  type AdmissionBatcher,
  createAdmissionBatcher,
  LEASE_MS,
  MAX_RELEASES_PER_STATEMENT,
  PATIENCE_MS,
  STALLED_MS,
} from '../../src/limits/batch.js';
import { startDbProxy } from '../helpers/db-proxy.js';
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
      // A millisecond apart, over at most half the patience: on a loaded machine one sleep may take
      // longer than that, and a request due after the patience would rightly find the statement sent.
      // Such a try proves nothing, so it is settled and made again (with fresh keys), up to ten times.
      for (let attempt = 0; attempt < 10; attempt++) {
        const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
        const before = statements();
        const pending: Promise<unknown>[] = [];
        const started = Date.now();
        for (let i = 0; i < 5 && Date.now() - started < PATIENCE_MS / 2; i++) {
          pending.push(batcher.admit(3000 + attempt * 10 + i, undefined, true));
          await sleep(1);
        }
        // Two milliseconds to spare: the patience's timer must not have fired before the check below.
        if (pending.length < 2 || Date.now() - started >= PATIENCE_MS - 2) {
          await Promise.allSettled(pending);
          continue;
        }
        expect(statements() - before).toBe(0);
        const decisions = (await Promise.all(pending)) as { admitted: boolean }[];
        expect(decisions.every((d) => d.admitted)).toBe(true);
        expect(statements() - before).toBe(1);
        expect(Date.now() - started).toBeGreaterThanOrEqual(PATIENCE_MS - 1);
        return;
      }
      throw new Error('the machine never gave two requests within half the patience in ten tries');
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

describe('admission leases (a busy key admitted without a round trip)', () => {
  /** One request as the API asks for it: from the key's lease when it has a slot, else from the database. */
  const ask = (batcher: AdmissionBatcher, key: number, epoch?: number) =>
    batcher.leased(key, epoch) ??
    batcher.admit(key, epoch === undefined ? undefined : { userId: 1, month: '2026-11-01' }, false, epoch);

  /** A key busy for a while: asked once, then again a lease period later (a short burst takes no lease). */
  const busy = async (batcher: AdmissionBatcher, key: number, epoch?: number) => {
    await ask(batcher, key, epoch);
    await new Promise((r) => setTimeout(r, LEASE_MS + 20));
    await ask(batcher, key, epoch);
  };

  const totals = async (key: number) =>
    (
      await db.pool.query<{ b: number; s: number; ahead: number }>(
        `SELECT b_total AS b, s_total AS s, b_cur_last - extract(epoch FROM clock_timestamp()) AS ahead
           FROM rate_limits WHERE key_id = $1`,
        [key],
      )
    ).rows[0]!;

  it("admits most of a busy key's requests from leases, counting its remaining slots down one by one", async () => {
    const { pool, statements } = countingPool(db.url);
    const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
    try {
      await busy(batcher, 1001);
      const before = statements();
      const remaining: number[] = [];
      for (let i = 0; i < 60; i++) remaining.push((await ask(batcher, 1001)).burst.remaining);
      expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 997 - i));
      expect(statements() - before).toBeLessThan(15);
    } finally {
      batcher.stop();
      await pool.end();
    }
  });

  it("renews a steadily busy key's lease in the background: none of its requests waits for a statement, and once it stops the windows count only the requests made", async () => {
    const batcher = createAdmissionBatcher(db.pool, { burst: rate('100000/min'), sustained: rate('1000000/day') });
    try {
      await busy(batcher, 1010);
      // Leases follow the key's demand: after a while at a steady pace, it holds one sized for it.
      let made = 2;
      const pace = async (ms: number) => {
        let waited = 0;
        const until = performance.now() + ms;
        while (performance.now() < until) {
          const leased = batcher.leased(1010);
          if (!leased) {
            waited++;
            await batcher.admit(1010);
          }
          made++;
          await new Promise((r) => setTimeout(r, 5));
        }
        return waited;
      };
      await pace(LEASE_MS);
      // Two lease periods more: each lease is replaced before it runs out of time or slots.
      expect(await pace(2 * LEASE_MS)).toBe(0);
      // Every lease's unused slots come back: the renewed ones' with the next renewal, the last one's
      // when it expires.
      const until = Date.now() + 4 * LEASE_MS;
      while ((await totals(1010)).b !== made && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await totals(1010)).toMatchObject({ b: made, s: made });
    } finally {
      batcher.stop();
    }
  }, 30_000);

  it('does not renew the small lease of a key asking twice a second: its request after the lease goes to the database', async () => {
    const batcher = createAdmissionBatcher(db.pool, { burst: rate('100000/min'), sustained: rate('1000000/day') });
    try {
      await busy(batcher, 1011);
      let waited = 0;
      for (let i = 0; i < (3 * LEASE_MS) / 500; i++) {
        if (!batcher.leased(1011)) {
          waited++;
          await batcher.admit(1011);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(waited).toBeGreaterThan(0);
    } finally {
      batcher.stop();
    }
  }, 30_000);

  it('gives back the leases of many keys going quiet in short statements, so as not to hold other instances up', async () => {
    const pool = createPool(db.url, { max: 10 });
    /** Keys named by each admission statement. */
    const sizes: number[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const config = args[0] as { name?: string; values?: unknown[][] };
      if (config.name === 'sift_rate_limit_admit_keys') sizes.push(config.values![0]!.length);
      return query(...args);
    };
    const batcher = createAdmissionBatcher(pool, { burst: rate('100000/min'), sustained: rate('1000000/day') });
    const keys = Array.from({ length: 2 * MAX_RELEASES_PER_STATEMENT + 10 }, (_, i) => 2000 + i);
    try {
      await Promise.all(keys.map((key) => busy(batcher, key)));
      // Each key now holds a lease it will not use: they all end, and come back, within two periods.
      sizes.length = 0;
      const until = Date.now() + 4 * LEASE_MS;
      const held = async () =>
        (
          await db.pool.query<{ n: string }>(
            'SELECT coalesce(sum(b_total), 0) AS n FROM rate_limits WHERE key_id = ANY($1::bigint[])',
            [keys],
          )
        ).rows[0]!.n;
      while (Number(await held()) !== 2 * keys.length && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      expect(Number(await held())).toBe(2 * keys.length);
      expect(sizes.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_RELEASES_PER_STATEMENT);
    } finally {
      batcher.stop();
      await pool.end();
    }
  }, 30_000);

  it('records leased slots a hold ahead, so that none leaves its window before a window after its use', async () => {
    const batcher = createAdmissionBatcher(db.pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
    try {
      await busy(batcher, 1002);
      for (let i = 0; i < 5; i++) await ask(batcher, 1002);
      const { ahead } = await totals(1002);
      expect(ahead).toBeGreaterThan(LEASE_MS / 1000 - 0.5);
      expect(ahead).toBeLessThanOrEqual(LEASE_MS / 1000);
    } finally {
      batcher.stop();
    }
  });

  it('gives unused slots back: once a lease expires the windows count only the requests made', async () => {
    const batcher = createAdmissionBatcher(db.pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
    try {
      await busy(batcher, 1003);
      for (let i = 0; i < 10; i++) await ask(batcher, 1003);
      // Leased slots are held beyond the 12 requests until the lease expires and the sweep gives them back.
      expect((await totals(1003)).b).toBeGreaterThan(12);
      const until = Date.now() + 3 * LEASE_MS;
      while ((await totals(1003)).b !== 12 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(await totals(1003)).toMatchObject({ b: 12, s: 12 });
    } finally {
      batcher.stop();
    }
  });

  it('two instances sharing a key never admit more than its limit, and after giving back their leases admit exactly it', async () => {
    const limits = { burst: rate('40/min'), sustained: rate('5000/day') };
    const one = createAdmissionBatcher(db.pool, limits);
    const two = createAdmissionBatcher(db.pool, limits);
    try {
      const run = async (batcher: AdmissionBatcher) => {
        await busy(batcher, 1004);
        let admitted = 2;
        for (let i = 0; i < 30; i++) if ((await ask(batcher, 1004)).admitted) admitted++;
        return admitted;
      };
      const [a, b] = await Promise.all([run(one), run(two)]);
      expect(a + b).toBeLessThanOrEqual(40);
      await Promise.all([one.releaseAll(), two.releaseAll()]);
      let more = 0;
      while ((await ask(one, 1004)).admitted) more++;
      expect(a + b + more).toBe(40);
      expect((await totals(1004)).b).toBe(40);
    } finally {
      one.stop();
      two.stop();
    }
  });

  it('serves a request that needs the monthly usage only from a lease read in the same usage epoch', async () => {
    const batcher = createAdmissionBatcher(db.pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
    try {
      await busy(batcher, 1005, 7);
      // Leases grow with the key's demand: after these, the key holds one with slots to spare.
      for (let i = 0; i < 30; i++) await ask(batcher, 1005, 7);
      // A usage write ended since (epoch 8): the lease's persisted count may miss it.
      expect(batcher.leased(1005, 8)).toBeNull();
      // A request that does not look at the quota may still use it, and one in epoch 7 too.
      expect(batcher.leased(1005)).not.toBeNull();
      expect(batcher.leased(1005, 7)).not.toBeNull();
    } finally {
      batcher.stop();
    }
  });

  it('takes no lease for a short burst: every request of it is recorded as it is made', async () => {
    const { pool, statements } = countingPool(db.url);
    const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
    try {
      for (let i = 0; i < 30; i++) await ask(batcher, 1006);
      expect(statements()).toBe(30);
      expect(await totals(1006)).toMatchObject({ b: 30, s: 30 });
    } finally {
      batcher.stop();
      await pool.end();
    }
  });

  it('admits nothing from a lease once the database stops answering: a failed or stalled statement ends that', async () => {
    const proxy = await startDbProxy(db.url);
    const pool = createPool(proxy.url, { max: 4 });
    pool.on('error', () => {});
    const batcher = createAdmissionBatcher(pool, { burst: rate('1000/min'), sustained: rate('5000/day') });
    try {
      await busy(batcher, 1007);
      // Leases grow with the key's demand: after these, the key holds one with slots to spare.
      for (let i = 0; i < 30; i++) await ask(batcher, 1007);
      expect(batcher.leased(1007)).not.toBeNull();
      // Stalled: a statement in flight longer than STALLED_MS.
      await proxy.setMode('blackhole');
      const stalled = Promise.resolve(batcher.admit(1008)).catch(() => 'failed');
      await new Promise((r) => setTimeout(r, STALLED_MS + 50));
      expect(batcher.leased(1007)).toBeNull();
      // Refused: the statement fails, and the lease is gone for good.
      await proxy.setMode('refuse');
      await stalled;
      await expect(batcher.admit(1009)).rejects.toBeTruthy();
      await proxy.setMode('pass');
      expect(batcher.leased(1007)).toBeNull();
    } finally {
      batcher.stop();
      await pool.end().catch(() => {});
      await proxy.close();
    }
  }, 30_000);
});
