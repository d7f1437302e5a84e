import type pg from 'pg';
import type { Rate } from '../config/index.js';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';

/*
 * Burst + sustained limits per API key as bucketed sliding windows, shared by
 * every instance through Postgres (migrations/0006_rate_buckets.sql, leases:
 * 0009_rate_leases.sql).
 *
 * What "60/min" and "5000/day" guarantee, to the second:
 * - Never more than `limit` requests admitted in ANY interval of the window's
 *   length, across all instances (60 in any 60 s; 5000 in any 86 400 s).
 * - Admissions are grouped in buckets of one step (window / 1440, at least
 *   1 s: 1 s for a minute, 3 s for an hour, 60 s for a day); a bucket leaves
 *   the window when its latest admission does. So a slot taken at time t is
 *   free again between t + window and t + window + step: at most 1 s late for
 *   60/min, 60 s late for 5000/day. (DRF's exact log frees it at t + window.)
 *   A slot of a lease (batch.ts) is recorded up to its hold ahead of its use,
 *   so it frees up to that much later still.
 * - A refused request consumes nothing, in either window.
 * - Time is the database clock, so instances with skewed clocks agree.
 * - The wait reported on a refusal (Retry-After) is when the bucket holding
 *   the needed slot leaves: the request is admitted if retried then.
 *
 * Cost: one call of the plpgsql function rate_limit_admit per key and batch
 * of that key's requests, one row, at most 1441 buckets per window whatever
 * the limit: the cost does not grow with the limits, and one key's concurrent
 * requests do not queue on the row lock one by one. batch.ts sends every
 * request that arrives while a decision is in flight, whatever its key, in
 * the next statement: one round trip for many keys.
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

/*
 * Several keys in one statement: the function runs once per key, in the order
 * of the arrays (ascending key ids, so that two instances' statements take the
 * keys' row locks in the same order and never deadlock).
 */
const ADMIT_SQL = `
SELECT a.*,
  (SELECT u.searches FROM usage_monthly u WHERE u.user_id = r.user_id AND u.month = r.month) AS persisted_searches
FROM unnest($1::bigint[], $2::integer[], $7::bigint[], $8::date[], $10::integer[], $11::integer[], $12::float8[])
  WITH ORDINALITY AS r (key_id, wanted, user_id, month, extra, released, release_at, ord)
CROSS JOIN LATERAL rate_limit_admit(r.key_id, r.wanted, $3, $4, $5, $6, r.extra, $9::float8, r.released, r.release_at) a
ORDER BY r.ord
`;

interface AdmitRow {
  granted: number;
  burst_before: number;
  burst_reset: number | null;
  burst_wait: number | null;
  sustained_before: number;
  sustained_reset: number | null;
  sustained_wait: number | null;
  leased: number;
  recorded_at: number;
  persisted_searches: string | null;
}

export interface Limits {
  burst: Rate;
  sustained: Rate;
}

/** `wanted` requests of one key to decide together, in arrival order. */
export interface KeyRequests {
  keyId: number;
  wanted: number;
  /** Also read the user's persisted monthly searches (for the quota check). */
  usage?: UsageLookup;
  /** Slots to take beyond `wanted` as a lease (only when all `wanted` are admitted; see the migration). */
  extra?: number;
  /** Unused slots of an expired lease to give back first. */
  release?: { slots: number; recordedAt: number };
}

/** Slots taken beyond the wanted requests, to admit the key's next requests without a round trip. */
export interface Lease {
  slots: number;
  /** Database time (epoch seconds) the slots were recorded at: what a release names. */
  recordedAt: number;
  /** The decision of the lease's `index`-th slot (0-based), as if it had been asked for with the others. */
  decision(index: number): RateDecision;
}

export interface KeyDecisions {
  /** One per wanted request, in order. */
  decisions: RateDecision[];
  /** The lease taken (extra slots granted), or null. */
  lease: Lease | null;
}

/**
 * Decides the requests of several keys in one statement (one round trip,
 * whatever the number of keys): for each key, the first of its `wanted`
 * requests both windows have room for are admitted and recorded, the rest
 * refused. Returns each key's decisions in the order given. Keys must be
 * distinct; they are locked in ascending order whatever the order given.
 * Database errors propagate.
 */
export async function admitKeys(
  pool: pg.Pool,
  limits: Limits,
  requests: readonly KeyRequests[],
  holdSeconds = 0,
): Promise<KeyDecisions[]> {
  const { burst, sustained } = limits;
  const order = requests.map((_, i) => i).sort((a, b) => requests[a]!.keyId - requests[b]!.keyId);
  const sorted = order.map((i) => requests[i]!);
  // On every API request's path: a database that does not answer is a 503 within the bound, not a hang.
  const { rows } = await pool.query<AdmitRow>(
    withQueryTimeout(
      {
        name: 'sift_rate_limit_admit_keys',
        text: ADMIT_SQL,
        values: [
          sorted.map((r) => r.keyId),
          sorted.map((r) => r.wanted),
          burst.windowSeconds,
          burst.limit,
          sustained.windowSeconds,
          sustained.limit,
          sorted.map((r) => r.usage?.userId ?? null),
          sorted.map((r) => r.usage?.month ?? null),
          holdSeconds,
          sorted.map((r) => r.extra ?? 0),
          sorted.map((r) => r.release?.slots ?? 0),
          sorted.map((r) => r.release?.recordedAt ?? null),
        ],
      },
      HOT_QUERY_TIMEOUT_MS,
    ),
  );
  const result: KeyDecisions[] = new Array(requests.length);
  sorted.forEach((r, j) => {
    const row = rows[j]!;
    const decisions: RateDecision[] = [];
    for (let i = 0; i < r.wanted; i++) decisions.push(decisionOf(limits, r, row, i, i < row.granted));
    const lease: Lease | null =
      row.leased > 0
        ? {
            slots: row.leased,
            recordedAt: row.recorded_at,
            // The lease's slots come after the wanted requests, all admitted.
            decision: (index) => decisionOf(limits, r, row, r.wanted + index, true),
          }
        : null;
    result[order[j]!] = { decisions, lease };
  });
  return result;
}

/** The decision of the `index`-th request of one key's batch (lease slots after the wanted ones) from its row. */
function decisionOf(
  limits: Limits,
  request: KeyRequests,
  row: AdmitRow,
  index: number,
  admitted: boolean,
): RateDecision {
  const { burst, sustained } = limits;
  // Admitted requests count up from `before`; refused ones see everything admitted (wanted and lease).
  const granted = row.granted + row.leased;
  return {
    admitted,
    burst: windowState(burst, admitted, row.burst_before, index, granted, row.burst_reset, row.burst_wait),
    sustained: windowState(
      sustained,
      admitted,
      row.sustained_before,
      index,
      granted,
      row.sustained_reset,
      row.sustained_wait,
    ),
    persistedSearches: request.usage ? Number(row.persisted_searches ?? 0) : null,
  };
}

/**
 * Decides `wanted` requests of `keyId` at once (in arrival order): the first
 * ones both windows have room for are admitted and recorded, the rest
 * refused. With `usage`, also reads the user's persisted monthly searches in
 * the same round trip (for the quota check). Database errors propagate.
 */
export async function admitBatch(
  pool: pg.Pool,
  keyId: number,
  limits: Limits,
  wanted: number,
  usage?: UsageLookup,
): Promise<RateDecision[]> {
  return (await admitKeys(pool, limits, [{ keyId, wanted, usage }]))[0]!.decisions;
}

/** Checks and records one request of `keyId` against both limits (a batch of one). */
export async function admitRequest(
  pool: pg.Pool,
  keyId: number,
  limits: Limits,
  usage?: UsageLookup,
): Promise<RateDecision> {
  return (await admitBatch(pool, keyId, limits, 1, usage))[0]!;
}

/** One window's state for the `index`-th request of a batch in which `granted` were admitted. */
function windowState(
  rate: Rate,
  admitted: boolean,
  before: number,
  index: number,
  granted: number,
  reset: number | null,
  wait: number | null,
): WindowState {
  const { limit, windowSeconds } = rate;
  if (admitted) {
    const used = before + index + 1;
    return {
      limit,
      windowSeconds,
      used,
      remaining: Math.max(0, limit - used),
      // A lease's slots are recorded up to its hold (two seconds, batch.ts) ahead: never reported past the window.
      resetSeconds: reset === null ? windowSeconds : Math.min(windowSeconds, Math.max(0, reset)),
      exceeded: false,
    };
  }
  const used = before + granted;
  return {
    limit,
    windowSeconds,
    used,
    remaining: Math.max(0, limit - used),
    resetSeconds: wait === null ? 0 : Math.min(windowSeconds, Math.max(0, wait)),
    exceeded: used >= limit,
  };
}

/** Deletes the rows of keys that made no admitted request for longer than both windows. */
export async function pruneIdleRateLimits(pool: pg.Pool, limits: Limits): Promise<number> {
  const idleSeconds = Math.max(limits.burst.windowSeconds, limits.sustained.windowSeconds);
  const result = await pool.query(
    'DELETE FROM rate_limits WHERE touched_at < clock_timestamp() - make_interval(secs => $1)',
    [idleSeconds],
  );
  return result.rowCount ?? 0;
}
