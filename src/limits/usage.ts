import type pg from 'pg';
import { monthStart } from './month.js';

/*
 * Monthly search usage, per user and UTC month (table usage_monthly).
 *
 * Requests never write it themselves: the recorder adds their units to an
 * in-memory buffer, and a timer writes the whole buffer in one statement
 * every `intervalMs` (and the lifecycle flush on shutdown/app.close()).
 * A failed write puts its units back into the buffer for the next attempt.
 */

export interface UsageRecorder {
  /** Adds `units` searches for `userId` in the UTC month of `at`. Never touches the database. */
  add(userId: number, units: number, at?: Date): void;
  /** Units buffered (not yet written) for the user in the month (`YYYY-MM-01`). */
  pending(userId: number, month: string): number;
  /** Writes everything buffered; concurrent calls run one after the other. Rejects when the write fails. */
  flush(): Promise<void>;
  /** Stops the periodic flush (does not flush). */
  stop(): void;
}

export interface UsageRecorderOptions {
  intervalMs?: number;
  onError?: (err: Error) => void;
}

const FLUSH_SQL = `
INSERT INTO usage_monthly AS u (user_id, month, searches)
SELECT b.user_id, b.month, b.searches
FROM unnest($1::bigint[], $2::date[], $3::bigint[]) AS b (user_id, month, searches)
JOIN users ON users.id = b.user_id
ORDER BY b.user_id, b.month
ON CONFLICT (user_id, month) DO UPDATE SET searches = u.searches + EXCLUDED.searches
`;

export function createUsageRecorder(pool: pg.Pool, options: UsageRecorderOptions = {}): UsageRecorder {
  /** `${userId} ${month}` → units not yet written. */
  let buffer = new Map<string, number>();
  /** The batch being written right now (still counted as pending until the write ends). */
  let writing = new Map<string, number>();
  let chain: Promise<void> = Promise.resolve();

  const bufferKey = (userId: number, month: string) => `${userId} ${month}`;

  function addTo(target: Map<string, number>, key: string, units: number) {
    target.set(key, (target.get(key) ?? 0) + units);
  }

  async function writeBuffer(): Promise<void> {
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
    try {
      await pool.query(FLUSH_SQL, [userIds, months, searches]);
    } catch (err) {
      for (const [key, units] of batch) addTo(buffer, key, units);
      throw err;
    } finally {
      writing = new Map();
    }
  }

  function flush(): Promise<void> {
    const run = chain.then(writeBuffer);
    chain = run.catch(() => {});
    return run;
  }

  const timer = setInterval(() => {
    flush().catch((err: Error) => options.onError?.(err));
  }, options.intervalMs ?? 1000);
  timer.unref();

  return {
    add(userId, units, at = new Date()) {
      if (!Number.isSafeInteger(units) || units <= 0) return;
      addTo(buffer, bufferKey(userId, monthStart(at)), units);
    },
    pending(userId, month) {
      const key = bufferKey(userId, month);
      return (buffer.get(key) ?? 0) + (writing.get(key) ?? 0);
    },
    flush,
    stop() {
      clearInterval(timer);
    },
  };
}

/** Searches written for the user in the UTC month of `at` (buffered units of a running instance excluded). */
export async function monthlySearches(pool: pg.Pool, userId: number, at: Date = new Date()): Promise<number> {
  const { rows } = await pool.query<{ searches: string }>(
    'SELECT searches FROM usage_monthly WHERE user_id = $1 AND month = $2::date',
    [userId, monthStart(at)],
  );
  return Number(rows[0]?.searches ?? 0);
}
