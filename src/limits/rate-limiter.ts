import type pg from 'pg';
import type { Rate } from '../config/index.js';

/*
 * Burst + sustained limits per API key as exact sliding logs, shared by every
 * instance through Postgres.
 *
 * Storage: one row per key in the UNLOGGED table rate_limits, with the
 * admission timestamps of each window in an ascending array (at most `limit`
 * entries per window: 60 + 5000 by default, 8 bytes each, stored
 * uncompressed).
 *
 * Cost per request: one statement, one round trip, one row. The statement
 *   1. reads the key's row with FOR NO KEY UPDATE. Under contention it waits
 *      only for the row lock of other single statements (no lock is ever held
 *      across round trips), then sees the newest committed version (READ
 *      COMMITTED re-evaluates the row after the wait), so two instances can
 *      never both admit the last slot;
 *   2. finds the expired prefix of each array by binary search
 *      (rate_limit_expired, O(log n)) and decides: admitted when fewer than
 *      `limit` timestamps remain in each window;
 *   3. only when admitted by both, rewrites the row: each array without its
 *      expired prefix, plus the current time (never earlier than the last
 *      entry, so the arrays stay sorted by construction). A request refused by
 *      one limit consumes neither budget, and a refused request writes nothing;
 *   4. the first request of a key inserts its row (ON CONFLICT DO NOTHING;
 *      when two race, the loser runs the statement again).
 * Expired entries are cleaned in the same statement; rows of keys idle for
 * longer than both windows are deleted by pruneIdleRateLimits (periodic).
 * Time is the database clock, so instances with skewed clocks still agree.
 */

export interface WindowState {
  limit: number;
  windowSeconds: number;
  /** Requests admitted in the window, including this one when admitted. */
  used: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /**
   * Seconds until the window admits again: for a refused request, the wait
   * until a slot frees; otherwise until the oldest admitted entry leaves the
   * window (when `remaining` next grows).
   */
  resetSeconds: number;
  /** This window refused the request. */
  exceeded: boolean;
}

export interface RateDecision {
  admitted: boolean;
  burst: WindowState;
  sustained: WindowState;
  /** Searches already persisted for the user this month, when asked for. */
  persistedSearches: number | null;
}

export interface UsageLookup {
  userId: number;
  /** First day of the UTC month, `YYYY-MM-01`. */
  month: string;
}

const ADMIT_SQL = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
current_row AS MATERIALIZED (
  SELECT r.burst, r.sustained, c.now,
    rate_limit_expired(r.burst, c.now - make_interval(secs => $2)) AS burst_expired,
    rate_limit_expired(r.sustained, c.now - make_interval(secs => $4)) AS sustained_expired
  FROM rate_limits r CROSS JOIN clock c
  WHERE r.key_id = $1
  FOR NO KEY UPDATE OF r
),
decision AS MATERIALIZED (
  SELECT w.*, w.burst_count < $3 AND w.sustained_count < $5 AS admitted
  FROM (
    SELECT cr.*,
      cardinality(cr.burst) - cr.burst_expired AS burst_count,
      cardinality(cr.sustained) - cr.sustained_expired AS sustained_count
    FROM current_row cr
  ) w
),
admit AS (
  UPDATE rate_limits r
  SET burst = d.burst[d.burst_expired + 1:] || greatest(d.now, d.burst[cardinality(d.burst)]),
      sustained = d.sustained[d.sustained_expired + 1:] || greatest(d.now, d.sustained[cardinality(d.sustained)]),
      touched_at = d.now
  FROM decision d
  WHERE r.key_id = $1 AND d.admitted
),
first_request AS (
  INSERT INTO rate_limits (key_id, burst, sustained, touched_at)
  SELECT $1, ARRAY[c.now], ARRAY[c.now], c.now FROM clock c
  WHERE NOT EXISTS (SELECT 1 FROM current_row)
  ON CONFLICT (key_id) DO NOTHING
  RETURNING key_id
)
SELECT
  d.admitted,
  d.burst_count,
  EXTRACT(EPOCH FROM d.burst[d.burst_expired + greatest(d.burst_count - $3 + 1, 1)]
    + make_interval(secs => $2) - d.now)::float8 AS burst_wait,
  d.sustained_count,
  EXTRACT(EPOCH FROM d.sustained[d.sustained_expired + greatest(d.sustained_count - $5 + 1, 1)]
    + make_interval(secs => $4) - d.now)::float8 AS sustained_wait,
  (SELECT u.searches FROM usage_monthly u WHERE u.user_id = $6 AND u.month = $7::date) AS persisted_searches
FROM decision d
UNION ALL
SELECT true, 0, NULL, 0, NULL,
  (SELECT u.searches FROM usage_monthly u WHERE u.user_id = $6 AND u.month = $7::date)
FROM first_request
`;

interface AdmitRow {
  admitted: boolean;
  burst_count: number;
  burst_wait: number | null;
  sustained_count: number;
  sustained_wait: number | null;
  persisted_searches: string | null;
}

/**
 * Checks and records one request of `keyId` against both limits in one
 * statement. With `usage`, also reads the user's persisted monthly searches
 * in the same round trip (for the quota check). Database errors propagate.
 */
export async function admitRequest(
  pool: pg.Pool,
  keyId: number,
  limits: { burst: Rate; sustained: Rate },
  usage?: UsageLookup,
): Promise<RateDecision> {
  const { burst, sustained } = limits;
  const params = [
    keyId,
    burst.windowSeconds,
    burst.limit,
    sustained.windowSeconds,
    sustained.limit,
    usage?.userId ?? null,
    usage?.month ?? null,
  ];
  // Zero rows only when another statement inserted this key's first row at the same instant.
  for (let attempt = 0; attempt < 5; attempt++) {
    const { rows } = await pool.query<AdmitRow>({ name: 'sift_rate_limit_admit', text: ADMIT_SQL, values: params });
    const row = rows[0];
    if (!row) continue;
    return {
      admitted: row.admitted,
      burst: windowState(burst, row.admitted, row.burst_count, row.burst_wait),
      sustained: windowState(sustained, row.admitted, row.sustained_count, row.sustained_wait),
      persistedSearches: usage ? Number(row.persisted_searches ?? 0) : null,
    };
  }
  throw new Error('rate limiter: the first row of the key could not be created');
}

function windowState(rate: Rate, admitted: boolean, countBefore: number, wait: number | null): WindowState {
  const { limit, windowSeconds } = rate;
  if (admitted) {
    const used = countBefore + 1;
    // The oldest entry in the window (or this request's own when it is the only one) frees the next slot.
    const resetSeconds = countBefore === 0 || wait === null ? windowSeconds : wait;
    return { limit, windowSeconds, used, remaining: Math.max(0, limit - used), resetSeconds, exceeded: false };
  }
  const exceeded = countBefore >= limit;
  return {
    limit,
    windowSeconds,
    used: countBefore,
    remaining: Math.max(0, limit - countBefore),
    resetSeconds: wait === null ? 0 : Math.max(0, wait),
    exceeded,
  };
}

/** Deletes the rows of keys that made no admitted request for longer than both windows. */
export async function pruneIdleRateLimits(pool: pg.Pool, limits: { burst: Rate; sustained: Rate }): Promise<number> {
  const idleSeconds = Math.max(limits.burst.windowSeconds, limits.sustained.windowSeconds);
  const result = await pool.query(
    'DELETE FROM rate_limits WHERE touched_at < clock_timestamp() - make_interval(secs => $1)',
    [idleSeconds],
  );
  return result.rowCount ?? 0;
}
