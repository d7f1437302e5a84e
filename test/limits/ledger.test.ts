import { spawn } from 'node:child_process';
import { once } from 'node:events';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import { type AdmissionAsk, type AdmissionSettings, decideAdmissions } from '../../src/limits/admission.js';
import { createUsageLedger, type Reserved, type UsageLedger } from '../../src/limits/ledger.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startDbProxy } from '../helpers/db-proxy.js';

/*
 * The usage ledger (src/limits/ledger.ts) on real PostgreSQL: reserve, give back, prune, with the
 * conflicts between them played out on real concurrent connections and a real process killed.
 */

function rate(text: string): Rate {
  const r = parseRate(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

let db: TestDatabase;
let users = 0;
const pools: pg.Pool[] = [];
const ledgers: UsageLedger[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const ledger of ledgers) ledger.stop();
  for (const pool of pools) await pool.end();
  await db.drop();
});

async function newKey() {
  const user = await createUser(db.pool, { username: `ledger${++users}` });
  const issued = await issueApiKey(db.pool, user.id);
  return { keyId: issued.id, userId: user.id };
}

/** Settings that let every request in: only the conflicts and the ledger are under test. */
const OPEN: AdmissionSettings = {
  limits: { burst: rate('1000/min'), sustained: rate('100000/day') },
  monthlyQuota: 1000,
};

interface Watched {
  ledger: UsageLedger;
  settleErrors: unknown[];
  conflictRetries: unknown[];
}

/** A ledger on a pool of its own (another instance), recording its errors and retries. */
function ledgerOn(url: string, settings = OPEN, abandonedAfterMs?: number): Watched {
  const pool = createPool(url, { max: 2 });
  pools.push(pool);
  const settleErrors: unknown[] = [];
  const conflictRetries: unknown[] = [];
  const ledger = createUsageLedger(pool, settings, {
    onSettleError: (err) => settleErrors.push(err),
    onConflictRetry: (err) => conflictRetries.push(err),
    abandonedAfterMs,
  });
  ledgers.push(ledger);
  return { ledger, settleErrors, conflictRetries };
}

const ask = (key: { keyId: number; userId: number }, units = 1, metered = true): AdmissionAsk => ({
  key,
  limited: true,
  metered,
  units,
});

/** A transaction on its own connection holding the row locks `lockSql` takes, until `release`. */
async function holdLocks(lockSql: string, values: unknown[]) {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('BEGIN');
  await client.query(lockSql, values);
  return {
    async release() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

/**
 * Resolves once a statement whose text contains `fragment` waits on a row lock (read from
 * pg_stat_activity, the server's own view of its sessions), or has finished when `orDone` says so.
 */
async function waitUntilBlocked(fragment: string, orDone: () => boolean = () => false): Promise<'blocked' | 'done'> {
  for (let i = 0; i < 1000; i++) {
    if (orDone()) return 'done';
    const { rows } = await db.pool.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
          AND position($1 IN query) > 0`,
      [fragment],
    );
    if (rows.length > 0) return 'blocked';
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no statement with ${fragment} waited on a lock`);
}

async function usageOf(userId: number): Promise<number> {
  return monthlySearches(db.pool, userId);
}

async function receiptsLeft(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM usage_receipts');
  return rows[0]!.n;
}

describe('reserve more', () => {
  it('adds searches under the quota, refuses what it cannot hold, and gives back what did not count', async () => {
    const a = await newKey();
    const { ledger } = ledgerOn(db.url);
    const admitted = await ledger.reserve(ask(a, 1));
    const ticket = admitted.ticket!;
    // A quota of 3 cannot hold 1 + 3: nothing is added.
    expect(await ledger.reserveMore(ticket, 3, 3)).toBe(false);
    expect(await usageOf(a.userId)).toBe(1);
    expect(await ledger.reserveMore(ticket, 3, 4)).toBe(true);
    expect(ticket.units).toBe(4);
    expect(await usageOf(a.userId)).toBe(4);
    // Two of the four counted (two pages failed): the other two go back when the statement settles.
    ledger.answered(ticket, 2);
    await ledger.flush();
    expect(await usageOf(a.userId)).toBe(2);
    expect(await receiptsLeft()).toBe(0);
  });
});

describe('give back', () => {
  it('keeps the searches of answers that count and gives back the others once the statement is answered', async () => {
    const a = await newKey();
    const { ledger, settleErrors } = ledgerOn(db.url);
    const [first, second, third] = await Promise.all([
      ledger.reserve(ask(a, 2)),
      ledger.reserve(ask(a, 3)),
      ledger.reserve(ask(a, 1, false)),
    ]);
    expect([first!.ticket?.units, second!.ticket?.units, third!.ticket]).toEqual([2, 3, null]);
    expect(await usageOf(a.userId)).toBe(5);
    ledger.answered(first!.ticket!, first!.ticket!.units);
    await ledger.flush();
    // One request of the statement is still unanswered: its receipt stays, nothing is given back yet.
    expect(await receiptsLeft()).toBe(1);
    ledger.answered(second!.ticket!, 0);
    await ledger.flush();
    expect(await usageOf(a.userId)).toBe(2);
    expect(await receiptsLeft()).toBe(0);
    expect(settleErrors).toEqual([]);
  });

  it('keeps a refund owed while the database is away and gives it back once it returns', async () => {
    const a = await newKey();
    const proxy = await startDbProxy(db.url);
    try {
      const { ledger, settleErrors } = ledgerOn(proxy.url);
      const reserved = await ledger.reserve(ask(a, 4));
      await proxy.setMode('refuse');
      ledger.answered(reserved.ticket!, 0);
      await ledger.flush();
      expect(settleErrors.length).toBe(1);
      // Owed, not lost: the receipt that owes it is in the database.
      expect(await usageOf(a.userId)).toBe(4);
      expect(await receiptsLeft()).toBe(1);
      await proxy.setMode('pass');
      await ledger.flush();
      expect(await usageOf(a.userId)).toBe(0);
      expect(await receiptsLeft()).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('gives back, once, the receipts of a process killed before it answered (doubt 9)', async () => {
    const a = await newKey();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/ledger-process.ts', db.url, String(a.keyId), String(a.userId), '5'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    expect(line.toString()).toBe('reserved 5\n');
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await usageOf(a.userId)).toBe(5);

    const { ledger } = ledgerOn(db.url);
    // A fresh receipt may belong to a process still answering: left alone.
    expect((await ledger.prune()).abandonedReceipts).toBe(0);
    expect(await usageOf(a.userId)).toBe(5);
    // Past the age no running process leaves a receipt unsettled (the database's clock moved on).
    await db.pool.query(`UPDATE usage_receipts SET made_at = made_at - interval '16 minutes'`);
    const other = ledgerOn(db.url).ledger;
    const [one, two] = await Promise.all([ledger.prune(), other.prune()]);
    expect(one.abandonedReceipts + two.abandonedReceipts).toBe(1);
    expect(await usageOf(a.userId)).toBe(0);
    expect(await receiptsLeft()).toBe(0);
  });
});

describe('lock order: no deadlock between admissions, refunds and prunes', () => {
  it('a refund over several users waits behind an admission of the same users, never deadlocks (doubt 1)', async () => {
    const low = await newKey();
    const high = await newKey();
    const refunder = ledgerOn(db.url);
    const admitter = ledgerOn(db.url);
    // The refund's receipt names the higher user first, and its usage row is older on disk.
    const [forHigh, forLow] = await Promise.all([
      refunder.ledger.reserve(ask(high, 3)),
      refunder.ledger.reserve(ask(low, 3)),
    ]);
    // Another transaction holds the lower user's row: the admission of both users waits on it...
    const blocker = await holdLocks(
      `SELECT 1 FROM usage_monthly WHERE user_id = $1 AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date FOR UPDATE`,
      [low.userId],
    );
    const admitted = Promise.all([admitter.ledger.reserve(ask(low, 1)), admitter.ledger.reserve(ask(high, 1))]);
    await waitUntilBlocked('admit_api_requests');
    // ...and so does the refund of both, sent meanwhile.
    refunder.ledger.answered(forHigh.ticket!, 0);
    refunder.ledger.answered(forLow.ticket!, 0);
    const refunded = refunder.ledger.flush();
    await waitUntilBlocked('settle_usage_receipts');
    await blocker.release();

    const decided: Reserved[] = await admitted;
    await refunded;
    expect(decided.map((d) => d.admission.verdict)).toEqual(['admitted', 'admitted']);
    expect(refunder.settleErrors).toEqual([]);
    expect([...refunder.conflictRetries, ...admitter.conflictRetries]).toEqual([]);
    expect([await usageOf(low.userId), await usageOf(high.userId)]).toEqual([1, 1]);
  });

  it('a prune of idle rate rows never deadlocks with an admission of the same keys (doubt 2)', async () => {
    const low = await newKey();
    const high = await newKey();
    const watched = ledgerOn(db.url);
    // Rate rows for both keys, the higher key's first on disk, both idle.
    await watched.ledger.reserve(ask(high, 0, false));
    await watched.ledger.reserve(ask(low, 0, false));
    await db.pool.query(`UPDATE rate_limits SET touched_at = now() - interval '2 days' WHERE key_id = ANY($1)`, [
      [low.keyId, high.keyId],
    ]);
    const blocker = await holdLocks('SELECT 1 FROM rate_limits WHERE key_id = $1 FOR UPDATE', [low.keyId]);
    const admitted = Promise.all([
      watched.ledger.reserve(ask(low, 0, false)),
      watched.ledger.reserve(ask(high, 0, false)),
    ]);
    await waitUntilBlocked('admit_api_requests');
    let pruneDone = false;
    const pruned = watched.ledger.prune().finally(() => {
      pruneDone = true;
    });
    await waitUntilBlocked('prune_idle_rate_limits', () => pruneDone);
    await blocker.release();

    const decided = await admitted;
    expect(decided.map((d) => d.admission.verdict)).toEqual(['admitted', 'admitted']);
    // The row in use was skipped, not waited for: only the other one went.
    expect((await pruned).rateRows).toBe(1);
    expect(watched.conflictRetries).toEqual([]);
  });
});

describe('a row missing when the admission reads it (doubt 5)', () => {
  /** Another transaction deleting the row right after the statement made it, as a trigger of the test's database. */
  async function vanishing(table: 'usage_monthly' | 'rate_limits', column: 'user_id' | 'key_id', id: number) {
    await db.pool.query(`CREATE OR REPLACE FUNCTION test_vanish() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN EXECUTE format('DELETE FROM %I WHERE %I = $1', TG_TABLE_NAME, TG_ARGV[0]) USING TG_ARGV[1]::bigint; RETURN NULL; END $$`);
    await db.pool.query(
      `CREATE TRIGGER test_vanish AFTER INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION test_vanish('${column}', '${id}')`,
    );
    return () => db.pool.query(`DROP TRIGGER test_vanish ON ${table}`);
  }

  it('raises instead of refusing the request for a quota it has not used', async () => {
    const a = await newKey();
    const settings: AdmissionSettings = { ...OPEN, monthlyQuota: 10 };
    const restore = await vanishing('usage_monthly', 'user_id', a.userId);
    try {
      await expect(decideAdmissions(db.pool, settings, [ask(a, 1)])).rejects.toMatchObject({ code: '40001' });
    } finally {
      await restore();
    }
    expect((await decideAdmissions(db.pool, settings, [ask(a, 1)]))[0]!.admission.verdict).toBe('admitted');
  });

  it('raises instead of deciding on a rate row that is not there', async () => {
    const a = await newKey();
    const restore = await vanishing('rate_limits', 'key_id', a.keyId);
    try {
      await expect(decideAdmissions(db.pool, OPEN, [ask(a, 0, false)])).rejects.toMatchObject({ code: '40001' });
    } finally {
      await restore();
    }
  });
});

describe('the month', () => {
  it('two instances whose clocks differ by a minute across a month boundary count in the database’s month', async () => {
    const a = await newKey();
    const { rows } = await db.pool.query<{ month: string }>(
      `SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date::text AS month`,
    );
    const databaseMonth = rows[0]!.month;
    const first = ledgerOn(db.url).ledger;
    const second = ledgerOn(db.url).ledger;
    // Each instance's own clock, a minute apart around the turn of a year that is not the database's.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.UTC(2030, 11, 31, 23, 59, 30));
      const before = await first.reserve(ask(a, 1));
      vi.setSystemTime(Date.UTC(2031, 0, 1, 0, 0, 30));
      const after = await second.reserve(ask(a, 1));
      expect([before.month, after.month]).toEqual([databaseMonth, databaseMonth]);
    } finally {
      vi.useRealTimers();
    }
    expect(await usageOf(a.userId)).toBe(2);
    const { rows: stored } = await db.pool.query<{ month: string }>(
      'SELECT month::text AS month FROM usage_monthly WHERE user_id = $1',
      [a.userId],
    );
    expect(stored.map((r) => r.month)).toEqual([databaseMonth]);
  });

  it('with injected clocks, a request counts in the month of its own decision', async () => {
    const a = await newKey();
    const at = (ms: number): AdmissionSettings => ({ ...OPEN, clock: () => ms });
    const december = ledgerOn(db.url, at(Date.UTC(2030, 11, 31, 23, 59, 30))).ledger;
    const january = ledgerOn(db.url, at(Date.UTC(2031, 0, 1, 0, 0, 30))).ledger;
    const [d, j] = [await december.reserve(ask(a, 1)), await january.reserve(ask(a, 2))];
    expect([d.month, j.month]).toEqual(['2030-12-01', '2031-01-01']);
    january.answered(j.ticket!, 0);
    await january.flush();
    expect([
      await monthlySearches(db.pool, a.userId, new Date(Date.UTC(2030, 11, 15))),
      await monthlySearches(db.pool, a.userId, new Date(Date.UTC(2031, 0, 15))),
    ]).toEqual([1, 0]);
  });
});
