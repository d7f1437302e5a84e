import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { KeyRow } from '../auth/api-key-auth.js';
import type { Rate } from '../config/index.js';
import { HOT_QUERY_TIMEOUT_MS, STATEMENT_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';
import { monthStart } from './month.js';

/*
 * Admission of API requests: the database decides every one (migrations/0010_api_admission.sql,
 * the statement's body as 0013_admission_per_row.sql left it), so the answer is the same whatever the number of processes and instances sharing it.
 *
 * - Burst and sustained limits per key: never more than `limit` admissions in any interval of the
 *   window's length, across all instances; a refused request consumes nothing.
 * - The monthly quota per user is reserved at admission: an admitted request that counts searches
 *   adds its units in the same transaction (a search that then fails gives them back, usage.ts).
 * - A key this process has not cached is looked up by the same statement.
 *
 * One statement in flight per process: the requests that arrive while it runs (and those of the turn
 * of the event loop that sent it) are decided together by the next one, whatever their keys. Under
 * load that is one round trip for many requests instead of one each, and one connection of the
 * pool. Requests are decided in the order they arrived.
 *
 * A statement whose answer is lost (the connection broke, or the client-side bound passed) may still
 * have committed its reservations, while its requests were answered 503. Each statement therefore
 * leaves a receipt of what it reserved (admission_receipts, one slot per statement in flight); a
 * lost one is looked up once the statement cannot be running any more, and what it reserved is
 * given back, so usage counts only the requests that were answered.
 */

/** More requests than this in one turn are split over several statements. */
export const MAX_BATCH = 500;
/** How long after a lost answer its receipt is looked up: past the server's bound on the statement. */
export const LOST_ANSWER_SETTLE_MS = STATEMENT_TIMEOUT_MS + 5000;
/** How often a receipt that could not be looked up (the database still away) is asked for again. */
const LOST_ANSWER_RETRY_MS = 5000;
/** The most lost answers remembered; beyond, the oldest is given up (its searches stay counted). */
const MAX_LOST_ANSWERS = 1000;

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
  /** `YYYY-MM-01`: the month the request's searches were reserved in (a refund goes there). */
  month: string;
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
}

const ADMIT_SQL = `SELECT * FROM admit_api_requests($1::bigint[], $2::bigint[], $3::text[], $4::bytea[],
  $5::boolean[], $6::boolean[], $7::integer[], $8, $9, $10, $11, $12, $13::date, $14, $15::uuid, $16, $17)`;

/** Where a statement records what it reserved: this process's slot for it, and the statement's number. */
export interface Receipt {
  process: string;
  slot: number;
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
  const month = monthStart(new Date(nowMs ?? Date.now()));
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
          month,
          nowMs === undefined ? null : nowMs / 1000,
          receipt?.process ?? null,
          receipt?.slot ?? null,
          receipt?.statement ?? null,
        ],
      },
      HOT_QUERY_TIMEOUT_MS,
    ),
  );
  return asks.map((ask, i) => decidedOf(settings.limits, ask, rows[i]!, month));
}

function decidedOf(limits: Limits, ask: AdmissionAsk, row: AdmitRow, month: string): Decided {
  const decided: Decided = { admission: admissionOf(limits, row), month };
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

export interface Admissions {
  /** Decides the request with the others of this turn. Rejects when the database does not answer. */
  admit(ask: AdmissionAsk): Promise<Decided>;
  /** Stops looking up lost answers. */
  stop(): void;
}

/** Gathers the requests that arrive while a statement runs into the next one. */
export function createAdmissions(
  pool: pg.Pool,
  settings: AdmissionSettings,
  onLostAnswerError: (err: unknown) => void = () => {},
): Admissions {
  let waiting: { ask: AdmissionAsk; resolve(d: Decided): void; reject(err: unknown): void }[] = [];
  const process = randomUUID();
  let statements = 0;
  /** Receipt slots free for the next statement (a slot in flight or lost is not). */
  const freeSlots: number[] = [];
  let slots = 0;
  const lost = new Map<number, { receipt: Receipt; timer: NodeJS.Timeout }>();
  let stopped = false;

  function lookUpLater(receipt: Receipt, delayMs: number): void {
    if (stopped) return;
    const timer = setTimeout(() => {
      pool
        .query('SELECT refund_admission_receipt($1::uuid, $2, $3)', [receipt.process, receipt.slot, receipt.statement])
        .then(
          () => {
            lost.delete(receipt.statement);
            freeSlots.push(receipt.slot);
          },
          (err: unknown) => {
            onLostAnswerError(err);
            lookUpLater(receipt, LOST_ANSWER_RETRY_MS);
          },
        );
    }, delayMs);
    timer.unref();
    lost.set(receipt.statement, { receipt, timer });
    if (lost.size > MAX_LOST_ANSWERS) {
      const [oldest, entry] = lost.entries().next().value!;
      clearTimeout(entry.timer);
      lost.delete(oldest);
    }
  }

  /** A statement is in flight, or about to be sent at the end of this turn. */
  let busy = false;

  function sendSoon(): void {
    busy = true;
    setImmediate(send);
  }

  function send(): void {
    const batch = waiting.slice(0, MAX_BATCH);
    waiting = waiting.slice(MAX_BATCH);
    const receipt: Receipt = { process, slot: freeSlots.pop() ?? slots++, statement: ++statements };
    decideAdmissions(
      pool,
      settings,
      batch.map((w) => w.ask),
      receipt,
    )
      .then(
        (decided) => {
          freeSlots.push(receipt.slot);
          for (const [i, w] of batch.entries()) w.resolve(decided[i]!);
        },
        (err: unknown) => {
          lookUpLater(receipt, LOST_ANSWER_SETTLE_MS);
          // Those that queued behind it would wait as long again on a database that just did not
          // answer: they get the same answer now (each API answer stays within one statement's bound).
          const behind = waiting;
          waiting = [];
          for (const w of [...batch, ...behind]) w.reject(err);
        },
      )
      .finally(() => {
        busy = false;
        if (waiting.length > 0) sendSoon();
      });
  }

  return {
    admit(ask) {
      return new Promise((resolve, reject) => {
        waiting.push({ ask, resolve, reject });
        if (!busy) sendSoon();
      });
    },
    stop() {
      stopped = true;
      for (const { timer } of lost.values()) clearTimeout(timer);
      lost.clear();
    },
  };
}

/**
 * Deletes the rate rows of keys that made no admitted request for longer than both windows, and the
 * receipts of processes gone for a day.
 */
export async function pruneIdleRateLimits(pool: pg.Pool, limits: Limits): Promise<number> {
  const idleSeconds = Math.max(limits.burst.windowSeconds, limits.sustained.windowSeconds);
  const result = await pool.query(
    'DELETE FROM rate_limits WHERE touched_at < clock_timestamp() - make_interval(secs => $1)',
    [idleSeconds],
  );
  await pool.query(`DELETE FROM admission_receipts WHERE made_at < now() - interval '1 day'`);
  return result.rowCount ?? 0;
}
