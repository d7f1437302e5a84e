import type pg from 'pg';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';

/*
 * Searches reserved after admission, for a request whose count is known only once its body is read
 * (a POST of several pages to read): the same monthly quota as admission, in one statement on the
 * user's usage row (the row admission locks), in the month the admission counted the request in.
 * Refused when the quota cannot hold them: nothing is reserved then.
 */

/** Reserves `units` more searches of `userId` in `month`; false when the quota (0: none) cannot hold them. */
export async function reserveMoreSearches(
  pool: pg.Pool,
  ask: { userId: number; month: string; units: number; monthlyQuota: number },
): Promise<boolean> {
  const { rows } = await pool.query(
    withQueryTimeout(
      {
        text: `INSERT INTO usage_monthly AS u (user_id, month, searches)
                 SELECT $1::bigint, $2::date, $3::bigint WHERE $4::bigint = 0 OR $3::bigint <= $4::bigint
               ON CONFLICT (user_id, month) DO UPDATE SET searches = u.searches + EXCLUDED.searches
                 WHERE $4::bigint = 0 OR u.searches + EXCLUDED.searches <= $4::bigint
               RETURNING searches`,
        values: [ask.userId, ask.month, ask.units, ask.monthlyQuota],
      },
      HOT_QUERY_TIMEOUT_MS,
    ),
  );
  return rows.length > 0;
}
