import type pg from 'pg';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';
import { monthStart } from './month.js';

/*
 * Reading monthly search usage, per user and UTC month (table usage_monthly). Every write to it is
 * the usage ledger's (ledger.ts), which says what it counts.
 */

export interface MonthUsage {
  /** `YYYY-MM-01`. */
  month: string;
  searches: number;
}

/**
 * The searches counted for the user in the UTC month of `at`; without `at`, in the current month
 * by the database's clock (the month admissions count in, whatever this machine's clock says).
 */
export async function monthUsage(pool: pg.Pool, userId: number, at?: Date): Promise<MonthUsage> {
  const { rows } = await pool.query<{ month: string; searches: string | null }>(
    withQueryTimeout(
      {
        text: `SELECT m.month::text AS month, u.searches
                 FROM (SELECT coalesce($2::date, date_trunc('month', now() AT TIME ZONE 'UTC')::date) AS month) m
                 LEFT JOIN usage_monthly u ON u.user_id = $1 AND u.month = m.month`,
        values: [userId, at === undefined ? null : monthStart(at)],
      },
      HOT_QUERY_TIMEOUT_MS,
    ),
  );
  return { month: rows[0]!.month, searches: Number(rows[0]!.searches ?? 0) };
}

/** Searches counted for the user in the UTC month of `at` (default: the database's current month). */
export async function monthlySearches(pool: pg.Pool, userId: number, at?: Date): Promise<number> {
  return (await monthUsage(pool, userId, at)).searches;
}
