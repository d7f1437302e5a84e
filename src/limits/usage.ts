import type pg from 'pg';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';
import { monthStart, nextMonthStart } from './month.js';

/*
 * Monthly search usage, per user and UTC month (table usage_monthly).
 *
 * Requests never write it themselves: the recorder adds their units to an
 * in-memory buffer, and a timer writes the whole buffer in one transaction
 * every `intervalMs` (and the lifecycle flush on shutdown/app.close()).
 * Memory stays bounded whatever the traffic or the length of a database
 * outage: the buffer holds one counter per user and month (never one entry
 * per request), plus at most one batch whose write is in doubt.
 *
 * Exactly once, across connection failures: the batch is written in a
 * transaction whose id (xid8) comes back with the write, before COMMIT.
 * - The write fails before its id came back: COMMIT was never sent, the
 *   database rolls the transaction back; the units go back into the buffer.
 * - It fails after (the COMMIT or its answer lost: a connection reset,
 *   refused, black-holed): the batch is in doubt. Before anything else is
 *   written, pg_xact_status() says what became of it: committed (dropped
 *   here), aborted (back into the buffer) or still in progress (asked again
 *   on the next flush; the server ends a transaction whose client vanished,
 *   see IDLE_IN_TRANSACTION_TIMEOUT_MS in db/pool.ts).
 * Units in doubt still count as pending (for the quota and /api/v1/key/).
 */

/** The most users whose current-month keys are kept (keyNow). */
const MAX_CACHED_KEYS = 10_000;

export interface UsageRecorder {
  /** Adds `units` searches for `userId` in the UTC month of `at`. Never touches the database. */
  add(userId: number, units: number, at?: Date): void;
  /** Units buffered (not yet written) for the user in the month (`YYYY-MM-01`). */
  pending(userId: number, month: string): number;
  /**
   * Grows whenever units may have left `pending()` to be written (a write ended, a write in doubt was
   * settled): a persisted count read in one epoch plus `pending()` in the same epoch counts nothing twice
   * and misses nothing of this instance's.
   */
  epoch(): number;
  /** Writes everything buffered; concurrent calls run one after the other. Rejects when the write fails. */
  flush(): Promise<void>;
  /** Stops the periodic flush (does not flush). */
  stop(): void;
}

export interface UsageRecorderOptions {
  intervalMs?: number;
  onError?: (err: Error) => void;
}

/** Adds the batch and returns the id of the transaction doing it (run between BEGIN and COMMIT). */
const FLUSH_SQL = `
WITH written AS (
  INSERT INTO usage_monthly AS u (user_id, month, searches)
  SELECT b.user_id, b.month, b.searches
  FROM unnest($1::bigint[], $2::date[], $3::bigint[]) AS b (user_id, month, searches)
  JOIN users ON users.id = b.user_id
  ORDER BY b.user_id, b.month
  ON CONFLICT (user_id, month) DO UPDATE SET searches = u.searches + EXCLUDED.searches
)
SELECT pg_current_xact_id()::text AS xid
`;

/** A batch whose COMMIT was sent (or may have been) without its answer arriving. */
interface InDoubt {
  xid: string;
  batch: Map<string, number>;
}

export class UsageWriteInDoubt extends Error {
  override name = 'UsageWriteInDoubt';
}

export function createUsageRecorder(pool: pg.Pool, options: UsageRecorderOptions = {}): UsageRecorder {
  /** `${userId} ${month}` → units not yet written. */
  let buffer = new Map<string, number>();
  /** The batch being written right now (still counted as pending until the write ends). */
  let writing = new Map<string, number>();
  /** The batch whose write may or may not have committed (at most one: nothing else is written meanwhile). */
  let inDoubt: InDoubt | null = null;
  let chain: Promise<void> = Promise.resolve();
  let running = 0;
  let epoch = 0;

  const bufferKey = (userId: number, month: string) => `${userId} ${month}`;

  /*
   * The key of a user's units in the current month, kept while the month lasts: most adds are a
   * request's, made now, and building the month's text and the key for each cost about 0.2 µs and
   * 300 bytes of strings a request.
   */
  let monthFrom = 0;
  let monthUntil = 0;
  let keysThisMonth = new Map<number, string>();
  function keyNow(userId: number): string {
    const now = Date.now();
    if (now < monthFrom || now >= monthUntil) {
      const at = new Date(now);
      monthFrom = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
      monthUntil = nextMonthStart(at).getTime();
      keysThisMonth = new Map();
    }
    let key = keysThisMonth.get(userId);
    if (key === undefined) {
      key = bufferKey(userId, monthStart(new Date(monthFrom)));
      // Bounded like the buffer's users: forgetting them all at worst builds their keys again.
      if (keysThisMonth.size >= MAX_CACHED_KEYS) keysThisMonth.clear();
      keysThisMonth.set(userId, key);
    }
    return key;
  }

  function addTo(target: Map<string, number>, key: string, units: number) {
    target.set(key, (target.get(key) ?? 0) + units);
  }

  function putBack(batch: Map<string, number>) {
    for (const [key, units] of batch) addTo(buffer, key, units);
  }

  /** Learns what became of the batch in doubt; throws while the database cannot say. */
  async function settleInDoubt(doubt: InDoubt): Promise<void> {
    const { rows } = await pool.query<{ status: string | null }>(
      withQueryTimeout(
        { text: 'SELECT pg_xact_status($1::xid8) AS status', values: [doubt.xid] },
        HOT_QUERY_TIMEOUT_MS,
      ),
    );
    const status = rows[0]?.status ?? null;
    if (status === 'in progress') {
      throw new UsageWriteInDoubt(`usage write (transaction ${doubt.xid}) still in progress; asking again later`);
    }
    inDoubt = null;
    epoch++;
    // Aborted: written nowhere, so written again. Null (too old for the commit log to tell, which
    // minutes after the write cannot happen): written again rather than lost.
    if (status !== 'committed') putBack(doubt.batch);
  }

  async function writeBuffer(): Promise<void> {
    if (inDoubt) await settleInDoubt(inDoubt);
    if (buffer.size === 0) return;
    const batch = buffer;
    buffer = new Map();
    writing = batch;
    const userIds: number[] = [];
    const months: string[] = [];
    const searches: number[] = [];
    for (const [key, units] of batch) {
      const [userId, month] = key.split(' ') as [string, string];
      userIds.push(Number(userId));
      months.push(month);
      searches.push(units);
    }
    let client: pg.PoolClient | undefined;
    let xid: string | undefined;
    let failure: Error | undefined;
    // A connection lost while the client is checked out is reported on it: this listener keeps it off the process.
    const onClientError = () => {};
    try {
      client = await pool.connect();
      client.on('error', onClientError);
      await client.query('BEGIN');
      const { rows } = await client.query<{ xid: string }>(FLUSH_SQL, [userIds, months, searches]);
      xid = rows[0]!.xid;
      await client.query('COMMIT');
    } catch (err) {
      failure = err as Error;
      if (xid === undefined) putBack(batch);
      else inDoubt = { xid, batch };
      throw err;
    } finally {
      writing = new Map();
      epoch++;
      if (client) {
        client.off('error', onClientError);
        // After a failure the connection is closed, never reused: the database rolls back what it did not commit.
        client.release(failure);
      }
    }
  }

  function flush(): Promise<void> {
    running++;
    const run = chain.then(writeBuffer).finally(() => {
      running--;
    });
    chain = run.catch(() => {});
    return run;
  }

  const timer = setInterval(() => {
    // One periodic write at a time: while the database hangs, ticks do not pile up behind it.
    if (running > 0) return;
    flush().catch((err: Error) => options.onError?.(err));
  }, options.intervalMs ?? 1000);
  timer.unref();

  return {
    add(userId, units, at) {
      if (!Number.isSafeInteger(units) || units <= 0) return;
      addTo(buffer, at === undefined ? keyNow(userId) : bufferKey(userId, monthStart(at)), units);
    },
    pending(userId, month) {
      const key = bufferKey(userId, month);
      return (buffer.get(key) ?? 0) + (writing.get(key) ?? 0) + (inDoubt?.batch.get(key) ?? 0);
    },
    epoch: () => epoch,
    flush,
    stop() {
      clearInterval(timer);
    },
  };
}

/** Searches written for the user in the UTC month of `at` (buffered units of a running instance excluded). */
export async function monthlySearches(pool: pg.Pool, userId: number, at: Date = new Date()): Promise<number> {
  const { rows } = await pool.query<{ searches: string }>(
    withQueryTimeout(
      {
        text: 'SELECT searches FROM usage_monthly WHERE user_id = $1 AND month = $2::date',
        values: [userId, monthStart(at)],
      },
      HOT_QUERY_TIMEOUT_MS,
    ),
  );
  return Number(rows[0]?.searches ?? 0);
}
