import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { createSearchCache } from '../../src/upstream/cache.js';
import { createProviderServices, type ProviderServices } from '../../src/upstream/services.js';
import { createSharedCache } from '../../src/upstream/shared-cache.js';
import type { ProviderCall } from '../../src/providers/types.js';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * The response cache every worker and instance shares (src/upstream/shared-cache.ts): two sets
 * of provider services on one database stand for two processes, each with its own in-process cache.
 */

let db: TestDatabase;
let fake: FakeServer;

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startFakeServer({
    '/rows': async (req) => {
      await new Promise((r) => setTimeout(r, Number(req.query.get('ms') ?? 0)));
      if (req.query.get('fail')) return { status: 500, body: { error: 'boom' } };
      return { body: { rows: [req.query.get('q'), req.query.get('echo') ?? ''] } };
    },
  });
});
afterAll(async () => {
  await fake?.close();
  await db?.drop();
});
beforeEach(async () => {
  fake.requests.length = 0;
  await db.pool.query('TRUNCATE upstream_cache, upstream_flights');
});

const rows = (b: unknown) => (b as { rows: unknown[] }).rows;
const call = (query: string, extra: Partial<ProviderCall<unknown[]>> = {}): ProviderCall<unknown[]> => ({
  provider: 'provider_06',
  request: { url: `${fake.url}/rows?${query}` },
  parse: rows,
  ...extra,
});

/** A worker of a server with two: it shares from the start. */
function processOf(env: Record<string, string> = {}): ProviderServices {
  const config = parseConfig({
    DATABASE_URL: db.url,
    SEPIA_BASE_URL: fake.url,
    LOG_LEVEL: 'silent',
    WORKERS: '2',
    ...env,
  });
  return createProviderServices(config, db.pool, { cache: createSearchCache(4), shareCache: true });
}

describe('the shared cache', () => {
  it('serves an answer one process fetched to another, without a second upstream call', async () => {
    const a = processOf();
    const b = processOf();
    try {
      expect(await a.runner.call(call('q=once'))).toEqual(['once', '']);
      await a.shared!.settled();
      expect(await b.runner.call(call('q=once'))).toEqual(['once', '']);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    // Stopped processes take their entries and memberships with them: a restarted deployment starts cold.
    const left = await db.pool.query(
      'SELECT (SELECT count(*) FROM upstream_cache)::int AS entries, (SELECT count(*) FROM upstream_cache_members)::int AS members',
    );
    expect(left.rows).toEqual([{ entries: 0, members: 0 }]);
  });

  it('makes identical calls in flight on two processes at the same time once', async () => {
    const a = processOf();
    const b = processOf();
    try {
      const out = await Promise.all([
        a.runner.call(call('q=together&ms=150')),
        b.runner.call(call('q=together&ms=150')),
        a.runner.call(call('q=together&ms=150')),
        b.runner.call(call('q=together&ms=150')),
      ]);
      expect(out.every((o) => JSON.stringify(o) === '["together",""]')).toBe(true);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('never keeps a failure: the next process asks again', async () => {
    const a = processOf();
    const b = processOf();
    try {
      await expect(a.runner.call(call('q=bad&fail=1'))).rejects.toMatchObject({ kind: 'http_status' });
      await a.shared!.settled();
      await expect(b.runner.call(call('q=bad&fail=1'))).rejects.toMatchObject({ kind: 'http_status' });
      expect(fake.requests).toHaveLength(2);
      const { rows: stored } = await db.pool.query('SELECT count(*)::int AS n FROM upstream_cache');
      expect(stored).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('never shares a value that carries a configured secret', async () => {
    const secret = 'sepia-secret-value-42';
    const a = processOf({ MOJEEK_API_KEY: secret });
    try {
      await a.runner.call(call(`q=leak&echo=${secret}`));
      await a.shared!.settled();
      const { rows: stored } = await db.pool.query('SELECT value FROM upstream_cache');
      expect(stored).toEqual([]);
    } finally {
      await a.close();
    }
  });

  it("honours each call's TTL and never serves an expired answer", async () => {
    const a = processOf();
    const b = processOf();
    try {
      await a.runner.call(call('q=short', { cacheTtlMs: 100 }));
      await a.shared!.settled();
      await new Promise((r) => setTimeout(r, 200));
      await b.runner.call(call('q=short', { cacheTtlMs: 100 }));
      expect(fake.requests).toHaveLength(2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('never serves an entry stored under a key of a version whose values had another shape', async () => {
    // The version before value formats keyed an entry by the SHA-256 of the runner's key alone.
    const before = createHash('sha256').update('places', 'utf8').digest();
    await db.pool.query(
      `INSERT INTO upstream_cache (key, owner, provider, value, bytes, expires_at)
       VALUES ($1, 'an older process', 'provider_13', '{"shape":"old"}', 15, pacing_now() + 3600000)`,
      [before],
    );
    const shared = createSharedCache(db.pool, { maxBytes: 1024, clustered: true });
    try {
      expect(await shared.getOrFetch('places', 'provider_13', 60_000, async () => ({ shape: 'new' }))).toEqual({
        shape: 'new',
      });
    } finally {
      await shared.close();
    }
  });

  it('stays within its size bound when pruned, keeping the entries that live longest', async () => {
    const shared = createSharedCache(db.pool, { maxBytes: 40, clustered: true });
    for (const [i, ttl] of [60_000, 120_000, 180_000].entries()) {
      await shared.getOrFetch(`k${i}`, 'provider_06', ttl, async () => ({ n: 'x'.repeat(10) }));
    }
    await shared.settled();
    await shared.prune();
    const { rows: kept } = await db.pool.query<{ bytes: number }>(
      'SELECT bytes FROM upstream_cache ORDER BY expires_at',
    );
    expect(kept.reduce((n, r) => n + r.bytes, 0)).toBeLessThanOrEqual(40);
    expect(kept).toHaveLength(2);
  });

  it('is not used by a process alone on its database, and is once another one starts', async () => {
    await db.pool.query('TRUNCATE upstream_cache_members');
    const alone = processOf({ WORKERS: '1' });
    try {
      await alone.runner.call(call('q=alone'));
      await alone.shared!.settled();
      expect(alone.shared!.sharing).toBe(false);
      expect((await db.pool.query('SELECT count(*)::int AS n FROM upstream_cache')).rows).toEqual([{ n: 0 }]);
      const other = createSharedCache(db.pool, { maxBytes: 1024, heartbeatMs: 50 });
      try {
        // Both renew their membership; each then sees the other.
        const until = Date.now() + 5000;
        while (!(other.sharing && alone.shared!.sharing) && Date.now() < until)
          await new Promise((r) => setTimeout(r, 50));
        expect(other.sharing).toBe(true);
      } finally {
        await other.close();
      }
    } finally {
      await alone.close();
    }
  });

  it('is left out when SHARED_CACHE_MAX_MB is 0', async () => {
    const a = processOf({ SHARED_CACHE_MAX_MB: '0' });
    try {
      expect(a.shared).toBeUndefined();
    } finally {
      await a.close();
    }
  });
});
