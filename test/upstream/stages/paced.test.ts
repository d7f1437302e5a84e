import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPacer } from '../../../src/upstream/pacing/pacer.js';
import type { PacingPlan } from '../../../src/upstream/pacing/plan.js';
import { paced } from '../../../src/upstream/stages/paced.js';
import type { ProviderSlug } from '../../../src/providers/types.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/*
 * Stage 4, paced (src/upstream/stages/paced.ts) with the real pacer on real PostgreSQL: the wait for
 * a slot, what a wait cut short gives back, and the report written behind the caller's answer.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE provider_pacing, provider_call_leases, provider_budget_usage');
});

const PROVIDER: ProviderSlug = 'provider_06';

function planOf(plan: Partial<PacingPlan>): Map<ProviderSlug, PacingPlan> {
  return new Map([
    [
      PROVIDER,
      {
        intervalMs: null,
        slotMs: plan.intervalMs ?? null,
        explicitRate: false,
        concurrency: null,
        budget: null,
        learnable: false,
        provisionalMs: null,
        holdMs: 60_000,
        source: '',
        ...plan,
      },
    ],
  ]);
}

async function held(): Promise<{ leases: number; calls: number }> {
  const { rows } = await db.pool.query<{ leases: number; calls: number }>(
    `SELECT (SELECT count(*)::int FROM provider_call_leases) AS leases,
            (SELECT coalesce(sum(calls), 0)::int FROM provider_budget_usage) AS calls`,
  );
  return rows[0]!;
}

describe('the paced stage', () => {
  it('gives back the lease and the budget unit of a wait cut short by the request, and makes no call', async () => {
    // One call a minute, one at a time, ten a day: the second call's slot is a minute away.
    const pacer = createPacer(db.pool, {
      plans: planOf({ intervalMs: 60_000, concurrency: 1, budget: { period: 'day', calls: 10, perUser: null } }),
      reports: new Map(),
    });
    const stage = paced(pacer);
    expect(await stage(PROVIDER, 0, undefined, async () => 'first')).toBe('first');
    await pacer.settled();
    expect(await held()).toEqual({ leases: 0, calls: 1 });

    const controller = new AbortController();
    let made = false;
    const second = stage(PROVIDER, 120_000, controller.signal, async () => {
      made = true;
      return 'second';
    });
    setTimeout(() => controller.abort(), 100);
    await expect(second).rejects.toMatchObject({ kind: 'timeout' });
    await pacer.settled();
    expect(made).toBe(false);
    // Nothing held: with a concurrency of one, the provider is free for the next request at once.
    expect(await held()).toEqual({ leases: 0, calls: 1 });
  });

  it("answers the caller without waiting for the report, and paces this process's next call by it", async () => {
    const pacer = createPacer(db.pool, { plans: planOf({ concurrency: 2 }), reports: new Map() });
    const stage = paced(pacer);
    const blocker = await db.pool.connect();
    try {
      // The first call's report (which deletes its lease) waits behind this transaction's lock.
      const first = await stage(PROVIDER, 1000, undefined, async () => {
        await blocker.query('BEGIN');
        await blocker.query('SELECT id FROM provider_call_leases FOR UPDATE');
        return 'first';
      });
      expect(first).toBe('first');

      let leasesSeen = -1;
      const second = stage(PROVIDER, 1000, undefined, async () => {
        const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM provider_call_leases');
        leasesSeen = rows[0]!.n;
        return 'second';
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(leasesSeen).toBe(-1);
      await blocker.query('COMMIT');
      expect(await second).toBe('second');
      // The first call's lease was gone before the second took its own.
      expect(leasesSeen).toBe(1);
    } finally {
      blocker.release();
      await pacer.settled();
    }
  });

  it('calls at once, and makes no statement, for a provider nothing limits', async () => {
    const pacer = createPacer(db.pool, { plans: new Map(), reports: new Map() });
    expect(await paced(pacer)(PROVIDER, 0, undefined, async () => 'free')).toBe('free');
    expect(await held()).toEqual({ leases: 0, calls: 0 });
  });
});
