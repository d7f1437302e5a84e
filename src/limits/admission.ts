import type pg from 'pg';
import type { KeyRow } from '../auth/api-key-auth.js';
import type { Rate } from '../config/index.js';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';

/*
 * The admission statement: the database decides every API request (admit_api_requests,
 * migrations/0016_usage_ledger.sql), so the answer is the same whatever the number of processes
 * and instances sharing it.
 *
 * - Burst and sustained limits per key: never more than `limit` admissions in any interval of the
 *   window's length, across all instances; a refused request consumes nothing.
 * - The monthly quota per user: an admitted request that counts searches reserves its units in the
 *   same transaction, in the month of the decision; what happens to them next is the usage
 *   ledger's (ledger.ts), which sends these statements.
 * - A key this process has not cached is looked up by the same statement.
 */

/** More requests than this in one turn are split over several statements. */
export const MAX_BATCH = 500;

export interface Limits {
  burst: Rate;
  sustained: Rate;
}

export interface AdmissionSettings {
  limits: Limits;
  /** Searches per user and UTC month; 0 = unlimited. */
  monthlyQuota: number;
  /** The time to decide at (ms since the epoch); default: the database's clock, which all instances share. */
  clock?: () => number;
}

/** One API request to decide. */
export interface AdmissionAsk {
  /** The key, checked from this process's cache, or to be looked up with its secret's hash. */
  key: { keyId: number; userId: number } | { prefix: string; secretHash: Buffer };
  /** Counts against the rate limits. */
  limited: boolean;
  /** The endpoint counts searches: the monthly quota applies. */
  metered: boolean;
  /** Searches to reserve (0 for a request that will be refused as invalid: it still needs one left). */
  units: number;
}

export interface WindowState {
  limit: number;
  windowSeconds: number;
  /** Requests admitted in the window, this one included when admitted. */
  used: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Admitted: seconds until `remaining` next grows. Refused: seconds until the window has a free slot. */
  resetSeconds: number;
  /** This window refused the request. */
  exceeded: boolean;
}

/** The rate windows' verdict on a request (`admitted` false: a window was full). */
export interface RateDecision {
  admitted: boolean;
  burst: WindowState;
  sustained: WindowState;
}

export type Admission =
  | { verdict: 'admitted'; rate: RateDecision | null; searchesThisMonth: number | null }
  | { verdict: 'throttled'; rate: RateDecision }
  | { verdict: 'quota-exhausted'; rate: RateDecision; searchesThisMonth: number }
  | { verdict: 'invalid-key' }
  | { verdict: 'disabled-user' };

/** An admission, with the key row found for a key that was looked up (null: no usable key). */
export interface Decided {
  admission: Admission;
  /** `YYYY-MM-01`: the month of the decision (the database's, or the injected clock's). */
  month: string;
  /** Searches reserved for this request (0: none, nothing to give back). */
  reserved: number;
  row?: KeyRow | null;
  keyId?: number;
  userId?: number;
}

interface AdmitRow {
  auth: 'ok' | 'invalid' | 'disabled';
  key_id: string | null;
  user_id: string | null;
  username: string | null;
  secret_hash: Buffer | null;
  user_active: boolean | null;
  admitted: boolean;
  refused_by: 'rate' | 'quota' | null;
  burst_remaining: number | null;
  burst_reset_seconds: number | null;
  sustained_remaining: number | null;
  sustained_reset_seconds: number | null;
  burst_wait_seconds: number | null;
  sustained_wait_seconds: number | null;
  searches_this_month: string | null;
  reserved: number;
  month: string;
}

const ADMIT_SQL = `SELECT a.*, a.usage_month::text AS month FROM admit_api_requests($1::bigint[], $2::bigint[],
  $3::text[], $4::bytea[], $5::boolean[], $6::boolean[], $7::integer[], $8, $9, $10, $11, $12, $13, $14::uuid, $15) a`;

/** Where a statement records what it reserved: the process, and the statement's number in it. */
export interface Receipt {
  process: string;
  statement: number;
}

/** Decides the requests in one statement, in order. Database errors propagate. */
export async function decideAdmissions(
  pool: pg.Pool,
  settings: AdmissionSettings,
  asks: readonly AdmissionAsk[],
  receipt?: Receipt,
): Promise<Decided[]> {
  const { burst, sustained } = settings.limits;
  const nowMs = settings.clock?.();
  const known = (ask: AdmissionAsk) => ('keyId' in ask.key ? ask.key : undefined);
  const unknown = (ask: AdmissionAsk) => ('prefix' in ask.key ? ask.key : undefined);
  const { rows } = await pool.query<AdmitRow>(
    // On every API request's path: a database that does not answer is a 503 within the bound, not a hang.
    withQueryTimeout(
      {
        name: 'sift_admit_api_requests',
        text: ADMIT_SQL,
        values: [
          asks.map((a) => known(a)?.keyId ?? null),
          asks.map((a) => known(a)?.userId ?? null),
          asks.map((a) => unknown(a)?.prefix ?? null),
          asks.map((a) => unknown(a)?.secretHash ?? null),
          asks.map((a) => a.limited),
          asks.map((a) => a.metered),
          asks.map((a) => a.units),
          burst.windowSeconds,
          burst.limit,
          sustained.windowSeconds,
          sustained.limit,
          settings.monthlyQuota,
          nowMs === undefined ? null : nowMs / 1000,
          receipt?.process ?? null,
          receipt?.statement ?? null,
        ],
      },
      HOT_QUERY_TIMEOUT_MS,
    ),
  );
  return asks.map((ask, i) => decidedOf(settings.limits, ask, rows[i]!));
}

function decidedOf(limits: Limits, ask: AdmissionAsk, row: AdmitRow): Decided {
  const decided: Decided = { admission: admissionOf(limits, row), month: row.month, reserved: row.reserved };
  if (row.key_id !== null) {
    decided.keyId = Number(row.key_id);
    decided.userId = Number(row.user_id);
  }
  if ('prefix' in ask.key) {
    decided.row =
      row.key_id === null
        ? null
        : {
            keyId: Number(row.key_id),
            prefix: ask.key.prefix,
            userId: Number(row.user_id),
            username: row.username ?? '',
            secretHash: row.secret_hash!,
            userActive: row.user_active === true,
          };
  }
  return decided;
}

function admissionOf(limits: Limits, row: AdmitRow): Admission {
  if (row.auth === 'invalid') return { verdict: 'invalid-key' };
  if (row.auth === 'disabled') return { verdict: 'disabled-user' };
  const searches = row.searches_this_month === null ? null : Number(row.searches_this_month);
  if (row.burst_remaining === null) return { verdict: 'admitted', rate: null, searchesThisMonth: searches };
  const rateAdmitted = row.refused_by !== 'rate';
  const rate: RateDecision = {
    admitted: rateAdmitted,
    burst: windowState(
      limits.burst,
      rateAdmitted,
      row.burst_remaining,
      row.burst_reset_seconds,
      row.burst_wait_seconds,
    ),
    sustained: windowState(
      limits.sustained,
      rateAdmitted,
      row.sustained_remaining ?? 0,
      row.sustained_reset_seconds,
      row.sustained_wait_seconds,
    ),
  };
  if (row.refused_by === 'rate') return { verdict: 'throttled', rate };
  if (row.refused_by === 'quota') return { verdict: 'quota-exhausted', rate, searchesThisMonth: searches ?? 0 };
  return { verdict: 'admitted', rate, searchesThisMonth: searches };
}

function windowState(
  rate: Rate,
  admitted: boolean,
  remaining: number,
  reset: number | null,
  wait: number | null,
): WindowState {
  const { limit, windowSeconds } = rate;
  const within = (seconds: number | null) => Math.min(windowSeconds, Math.max(0, seconds ?? 0));
  const waitSeconds = within(wait);
  return {
    limit,
    windowSeconds,
    used: limit - remaining,
    remaining,
    resetSeconds: admitted ? within(reset) : waitSeconds,
    exceeded: !admitted && remaining === 0 && waitSeconds > 0,
  };
}
