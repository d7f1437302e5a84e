import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSearchCache } from '../../../src/upstream/cache.js';
import { createSharedCache } from '../../../src/upstream/shared-cache.js';
import { sharingPolicy } from '../../../src/upstream/shared-policy.js';
import { acrossProcesses } from '../../../src/upstream/stages/shared.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/*
 * Stage 2, shared (src/upstream/stages/shared.ts over shared-cache.ts), against real PostgreSQL:
 * each createSharedCache stands for one process (its own owner, its own flight listener).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE upstream_cache, upstream_flights, upstream_cache_members');
});

/** A promise and its resolver, to hold a fetch open until the test lets it answer. */
function held<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the shared stage', () => {
  it('passes a call through untouched without a shared level, or for a TTL of 0', async () => {
    const stage = acrossProcesses(undefined, createSearchCache(1));
    let made = 0;
    expect(await stage('provider_06', 'k', 60_000, {}, async () => ++made)).toBe(1);
    const shared = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true });
    try {
      const withShared = acrossProcesses(shared, createSearchCache(1));
      expect(await withShared('provider_06', 'k', 0, {}, async () => ++made)).toBe(2);
      const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM upstream_flights');
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await shared.close();
    }
  });
});

describe('waiting for another process', () => {
  it('hears the flight end and takes its answer, without asking the database again and again', async () => {
    const counted = new pg.Pool({ connectionString: db.url, max: 2 });
    let statements = 0;
    counted.on('acquire', () => statements++);
    // Flights that would last a minute: an answer in time can only come from the notice.
    const a = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true, flightMs: () => 60_000 });
    const b = createSharedCache(counted, {
      maxBytes: 1 << 20,
      clustered: true,
      flightMs: () => 60_000,
      heartbeatMs: 600_000,
    });
    try {
      const answer = held<{ rows: string[] }>();
      const claimed = held<void>();
      // A process fetches only once its lookup claimed the flight.
      const first = a.getOrFetch('together', 'provider_06', 60_000, () => {
        claimed.resolve();
        return answer.promise;
      });
      await claimed.promise;
      let bFetched = false;
      const before = statements;
      const second = b.getOrFetch('together', 'provider_06', 60_000, async () => {
        bFetched = true;
        return { rows: ['b'] };
      });
      answer.resolve({ rows: ['a'] });
      expect(await first).toEqual({ rows: ['a'] });
      expect(await second).toEqual({ rows: ['a'] });
      expect(bFetched).toBe(false);
      // The lookup that found the flight, and the one after its notice: no loop in between.
      expect(statements - before).toBeLessThanOrEqual(2);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await counted.end();
    }
  });

  it("never waits past the request's deadline, whatever the flight's length", async () => {
    await db.pool.query(
      `INSERT INTO upstream_flights (key, owner, expires_at) VALUES ($1, 'a live process', pacing_now() + 600000)`,
      [createHash('sha256').update(`test\nslow`, 'utf8').digest()],
    );
    const b = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true, valueFormat: 'test' });
    try {
      let fetched = false;
      const controller = new AbortController();
      const waiting = b.getOrFetch(
        'slow',
        'provider_06',
        60_000,
        async () => {
          fetched = true;
          return 1;
        },
        { signal: controller.signal, deadlineAt: performance.now() + 60_000 },
      );
      controller.abort();
      await expect(waiting).rejects.toMatchObject({ kind: 'timeout' });
      expect(fetched).toBe(false);

      const bounded = b.getOrFetch('slow', 'provider_06', 60_000, async () => 2, {
        deadlineAt: performance.now() + 100,
      });
      await expect(bounded).rejects.toMatchObject({ kind: 'timeout' });
    } finally {
      await b.close();
    }
  });

  it('takes over at once when the holder of the flight stops', async () => {
    const a = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true, flightMs: () => 60_000 });
    const b = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true, flightMs: () => 60_000 });
    try {
      const never = held<number>();
      const claimed = held<void>();
      void a.getOrFetch('orphan', 'provider_06', 60_000, () => {
        claimed.resolve();
        return never.promise;
      });
      await claimed.promise;
      const second = b.getOrFetch('orphan', 'provider_06', 60_000, async () => 7);
      await a.close();
      expect(await second).toBe(7);
    } finally {
      await b.close();
    }
  });
});

describe('lock order', () => {
  it('lets concurrent stores and lookups of the same keys on parallel connections finish without a deadlock', async () => {
    // Flights of a millisecond, so that lookups claim again what stores end. The statements of
    // migration 0012 lost some of these rounds to deadlocks (40P01) on the same machine.
    const keys = Array.from({ length: 200 }, () => randomBytes(32));
    const shuffled = () => [...keys].sort(() => Math.random() - 0.5);
    const clients = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        return c;
      }),
    );
    const failures: string[] = [];
    try {
      await Promise.all(
        clients.map(async (c, i) => {
          for (let round = 0; round < 30; round++) {
            const owner = `process ${i}`;
            const mine = shuffled();
            try {
              await c.query('SELECT * FROM upstream_cache_lookup($1, $2::bytea[], $3::float8[])', [
                owner,
                mine,
                mine.map(() => 1),
              ]);
              const stored = shuffled().slice(0, 8);
              await c.query(
                'SELECT upstream_cache_store($1, $2::bytea[], $3::text[], $4::text[], $5::float8[], $6::bytea[])',
                [
                  owner,
                  stored,
                  stored.map(() => 'provider_06'),
                  stored.map(() => '1'),
                  stored.map(() => 60_000),
                  shuffled(),
                ],
              );
              if (round % 5 === 0) await c.query('SELECT upstream_cache_prune(64)');
            } catch (err) {
              failures.push((err as { code?: string }).code ?? String(err));
            }
          }
        }),
      );
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
    expect(failures).toEqual([]);
  });
});

describe('where the shared level pays', () => {
  // 16 bits of a key's hash: below 65536 / 64 is the sample, below 65536 / 512 the thin sample.
  const outsideAll = 50_000;
  const inSample = 600;
  const inThinSample = 60;
  const sharedSampling = { sampleOf: 64, window: 100, thinBy: 8 };

  it('keeps a provider whose lookups save nothing to a sample of its keys, the same on every process', () => {
    const policy = sharingPolicy(() => false);
    expect(policy.uses('provider_06', outsideAll)).toBe(true);
    for (let i = 0; i < 200; i++) policy.note('provider_06', false);
    expect(policy.full('provider_06')).toBe(false);
    expect(policy.uses('provider_06', outsideAll)).toBe(false);
    expect(policy.uses('provider_06', 3 << 8)).toBe(true);
  });

  it('shares all its keys again once the sample saves calls', () => {
    const policy = sharingPolicy(() => false);
    for (let i = 0; i < 200; i++) policy.note('provider_06', false);
    for (let i = 0; i < 200; i++) policy.note('provider_06', i % 5 === 0);
    expect(policy.full('provider_06')).toBe(true);
    expect(policy.uses('provider_06', outsideAll)).toBe(true);
  });

  it('thins the sample where a window of it saved nothing at all, and keeps it while it saves some', () => {
    const policy = sharingPolicy(() => false, sharedSampling);
    for (let i = 0; i < 100; i++) policy.note('provider_06', false);
    // A window of the sample that saved a few calls, below a tenth: the sample stays.
    for (let i = 0; i < 100; i++) policy.note('provider_06', i % 50 === 0);
    expect(policy.uses('provider_06', inSample)).toBe(true);
    for (let i = 0; i < 100; i++) policy.note('provider_06', false);
    expect(policy.full('provider_06')).toBe(false);
    expect(policy.uses('provider_06', inSample)).toBe(false);
    expect(policy.uses('provider_06', inThinSample)).toBe(true);
    // However long it saves nothing, the thin sample stays.
    for (let i = 0; i < 10_000; i++) policy.note('provider_06', false);
    expect(policy.uses('provider_06', inThinSample)).toBe(true);
  });

  it('brings the sample back at the first call the thin sample saves, then all keys once it saves enough', () => {
    const policy = sharingPolicy(() => false, sharedSampling);
    for (let i = 0; i < 200; i++) policy.note('provider_06', false);
    expect(policy.uses('provider_06', inSample)).toBe(false);
    policy.note('provider_06', true);
    expect(policy.uses('provider_06', inSample)).toBe(true);
    expect(policy.uses('provider_06', outsideAll)).toBe(false);
    for (let i = 0; i < 100; i++) policy.note('provider_06', i % 4 === 0);
    expect(policy.full('provider_06')).toBe(true);
    expect(policy.uses('provider_06', outsideAll)).toBe(true);
  });

  it('shares all keys again as soon as the sample has saved a tenth of a window', () => {
    const policy = sharingPolicy(() => false, sharedSampling);
    for (let i = 0; i < 100; i++) policy.note('provider_06', i % 50 === 0);
    expect(policy.full('provider_06')).toBe(false);
    for (let i = 0; i < 9; i++) policy.note('provider_06', true);
    expect(policy.full('provider_06')).toBe(false);
    policy.note('provider_06', true);
    expect(policy.full('provider_06')).toBe(true);
    expect(policy.uses('provider_06', outsideAll)).toBe(true);
  });

  it("never thins this process's level", () => {
    const policy = sharingPolicy(() => false);
    for (let i = 0; i < 2000; i++) policy.note('provider_06', false);
    expect(policy.uses('provider_06', 65536 / 16 - 1)).toBe(true);
  });

  it('always shares a paced or budgeted provider, whatever it saves', () => {
    const policy = sharingPolicy((p) => p === 'provider_01');
    for (let i = 0; i < 1000; i++) policy.note('provider_01', false);
    expect(policy.uses('provider_01', outsideAll)).toBe(true);
  });

  /**
   * Entries stored for `later` new keys, after `distinct` keys that no other process asks for
   * (nothing saved) have taught the level where it pays.
   */
  async function storedAfter(distinct: number, later: number): Promise<number> {
    const shared = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true });
    try {
      for (let i = 0; i < distinct; i++) await shared.getOrFetch(`distinct ${i}`, 'provider_06', 60_000, async () => i);
      await shared.settled();
      await db.pool.query('TRUNCATE upstream_cache');
      for (let i = 0; i < later; i++) await shared.getOrFetch(`later ${i}`, 'provider_06', 60_000, async () => i);
      await shared.settled();
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM upstream_cache');
      return rows[0]!.n;
    } finally {
      await shared.close();
    }
  }

  it('makes no statement for a call outside the sample', async () => {
    const n = await storedAfter(200, 640);
    // About one key in 16 is the shared level's sample (some 40 of the 640 asked; 1 in 4 would be 160).
    expect(n).toBeGreaterThan(15);
    expect(n).toBeLessThan(80);
  });

  it('makes statements for about one call in 512 once its sample has saved nothing', async () => {
    // The first 100 lookups (all keys), then 100 of the sample (some 1,600 calls): nothing saved.
    const n = await storedAfter(3000, 5120);
    // Some 10 of the 5,120 (1 in 16 would be 320).
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(30);
  });
});

describe('values', () => {
  it('shares only a value that comes back from JSON as it was, and keys each by the value format', async () => {
    const a = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true, valueFormat: 'one' });
    const b = createSharedCache(db.pool, { maxBytes: 1 << 20, clustered: true, valueFormat: 'two' });
    try {
      const dated = await a.getOrFetch('dated', 'provider_06', 60_000, async () => ({ at: new Date(0) }));
      expect(dated.at).toBeInstanceOf(Date);
      await a.getOrFetch('plain', 'provider_06', 60_000, async () => ({ at: '1970-01-01' }));
      await a.settled();
      const { rows } = await db.pool.query<{ value: string }>('SELECT value FROM upstream_cache');
      expect(rows).toEqual([{ value: '{"at":"1970-01-01"}' }]);
      // Another value format (another version, whose shapes may differ) never reads it.
      expect(await b.getOrFetch('plain', 'provider_06', 60_000, async () => ({ at: 'fetched again' }))).toEqual({
        at: 'fetched again',
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
