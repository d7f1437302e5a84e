import type pg from 'pg';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';
import { monthStart } from './month.js';

/*
 * Monthly search usage, per user and UTC month (table usage_monthly). Searches are added when a
 * request is admitted (admission.ts), in the statement that admits it: the count is exact at any
 * number of processes and survives any crash of the server. A request that reserved searches and
 * then does not count them (a search every provider failed, a body refused as invalid) gives them
 * back here, off the response path.
 */

export interface UsageRefunds {
  /** Gives back `units` searches of `userId` in the month `month` (`YYYY-MM-01`). Never throws. */
  giveBack(userId: number, month: string, units: number): void;
  /** Waits for the refunds in flight. */
  flush(): Promise<void>;
}

export function createUsageRefunds(pool: pg.Pool, onError: (err: unknown) => void): UsageRefunds {
  const inFlight = new Set<Promise<void>>();
  return {
    giveBack(userId, month, units) {
      if (!Number.isSafeInteger(units) || units <= 0) return;
      const sent = pool
        .query(
          `UPDATE usage_monthly SET searches = greatest(0, searches - $3)
            WHERE user_id = $1 AND month = $2::date`,
          [userId, month, units],
        )
        .then(
          () => undefined,
          (err: unknown) => onError(err),
        )
        .finally(() => inFlight.delete(sent));
      inFlight.add(sent);
    },
    async flush() {
      await Promise.all([...inFlight]);
    },
  };
}

/** Searches counted for the user in the UTC month of `at`. */
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
