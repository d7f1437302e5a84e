import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { STATEMENT_TIMEOUT_MS } from '../db/pool.js';
import { type AdmissionAsk, type AdmissionSettings, type Decided, decideAdmissions, MAX_BATCH } from './admission.js';

/*
 * The usage ledger: every write to the monthly usage of users (usage_monthly), through three
 * operations (migrations/0016_usage_ledger.sql holds their statements).
 *
 * Invariant: a user's usage for a UTC month counts the searches of the API requests admitted in
 * that month and answered with an answer that counts (2xx and 3xx; a 5xx too where the route
 * says so), once each, whatever the number of processes and instances, and across database
 * outages. The month is the admission's, decided by the database's clock (or the injected one),
 * never by an application's.
 *
 * - reserve: the admission statement adds an admitted request's searches to its user's row, in
 *   the same transaction that decides it (so no two processes spend the same unit), and leaves a
 *   receipt of what the statement reserved (usage_receipts, one row per statement).
 * - give back: once every request a statement admitted has been answered, its receipt is settled:
 *   the searches of the answers that do not count are subtracted and the receipt goes, in one
 *   transaction. A statement whose answer was lost (its requests were answered 503) is settled
 *   whole once it cannot be running any more. A settle that fails is retried until it is done;
 *   until then the receipt in the database is what owes the refund. A receipt older than
 *   ABANDONED_AFTER_MS was left by a process that died before settling it: any process gives all
 *   of it back when it prunes.
 * - reserve more: a request whose count is known only once its body is read (a POST of several
 *   pages) reserves the rest on its user's row in one statement (usage_reserve_more), under the
 *   same quota; its ticket then owes them too, and its settle gives back those that did not count.
 * - prune: rate rows idle for longer than both windows go, and abandoned receipts are given back.
 *
 * Rows are locked in one order everywhere: usage rows by (user, month) ascending, then rate rows by
 * key ascending; prune skips rows in use. A statement that loses a deadlock anyway (or finds a row
 * vanished) is retried.
 *
 * Known over-counts (searches counted that did not count), each temporary:
 * - until its statement settles: the searches of a request answered with an error stay counted
 *   until every request of its statement has been answered (a lost answer: LOST_ANSWER_SETTLE_MS),
 *   or longer while the database is away; the quota may refuse a request meanwhile;
 * - a process that died: what its unsettled receipts reserved stays counted for up to
 *   ABANDONED_AFTER_MS plus one PRUNE_INTERVAL_MS; what it reserved later (reserve more) and did
 *   not settle stays counted (the receipt holds what admission reserved).
 * Known under-counts: the abandoned receipts of a process that died are given back whole, so the
 * searches it answered between its statement and its death (the requests in flight then, and those
 * answered within SETTLE_GATHER_MS and one round trip before it) are not counted; likewise a receipt given back as
 * abandoned while its process, still running, could not reach the database that long. The
 * database's own crash may forget the last instants of usage (it commits these writes without
 * waiting for the disk).
 */

/** How long after a lost answer its receipt is settled: past the server's bound on the statement. */
export const LOST_ANSWER_SETTLE_MS = STATEMENT_TIMEOUT_MS + 5000;
/** Answered statements wait this long to be settled together: one statement for many under load. */
const SETTLE_GATHER_MS = 100;
/** How often a settle that failed (the database away) is tried again. */
const SETTLE_RETRY_MS = 5000;
/** A receipt this old was left by a process that died: any process gives it back. */
export const ABANDONED_AFTER_MS = 15 * 60 * 1000;
/** How often each process prunes. */
export const PRUNE_INTERVAL_MS = 10 * 60 * 1000;
/** PostgreSQL's deadlock_detected and serialization_failure: the statement did nothing, run it again. */
const RETRIED_CODES = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 3;

/** An admitted request's reservation, to be given back or kept when it has been answered. */
export interface UsageTicket {
  statement: number;
  userId: number;
  /** `YYYY-MM-01`: the month the admission counted the request in. */
  month: string;
  /** Searches reserved: at admission, and later by `reserveMore`. */
  units: number;
}

export interface Reserved extends Decided {
  /** Set when the request reserved searches: hand it to `answered` once it has been answered. */
  ticket: UsageTicket | null;
}

export interface UsageLedger {
  /** Decides the request with the others of this turn. Rejects when the database does not answer. */
  reserve(ask: AdmissionAsk): Promise<Reserved>;
  /**
   * Reserves `units` more searches for an admitted request whose count is known only once its body
   * is read, against the monthly quota (0: none), in the admission's month; false when the quota
   * cannot hold them (nothing reserved). Rejects when the database does not answer.
   */
  reserveMore(ticket: UsageTicket, units: number, monthlyQuota: number): Promise<boolean>;
  /**
   * The request of `ticket` was answered and `counted` of its searches count (0 to all of them):
   * the others are given back. Call once per ticket.
   */
  answered(ticket: UsageTicket, counted: number): void;
  /** Sends the settles that are due and waits for them (at shutdown). */
  flush(): Promise<void>;
  /** Deletes idle rate rows and gives back abandoned receipts. */
  prune(): Promise<{ rateRows: number; abandonedReceipts: number }>;
  /** Stops the timers (lost answers not yet settled are left to another process's prune). */
  stop(): void;
}

export interface LedgerOptions {
  /** A settle failed; it will be tried again. */
  onSettleError?: (err: unknown) => void;
  /** A statement lost a deadlock (or found a row vanished) and is run again. */
  onConflictRetry?: (err: unknown) => void;
  /** Default ABANDONED_AFTER_MS. */
  abandonedAfterMs?: number;
}

/** Runs `statement` again when PostgreSQL aborted it for a deadlock or a serialization failure. */
async function retryingConflicts<T>(statement: () => Promise<T>, onRetry: (err: unknown) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= MAX_ATTEMPTS || typeof code !== 'string' || !RETRIED_CODES.has(code)) throw err;
      onRetry(err);
    }
  }
}

interface OpenReceipt {
  /** Requests of the statement that reserved searches and are not answered yet. */
  unanswered: number;
  refunds: { userId: number; units: number }[];
}

interface DueSettle {
  statement: number;
  /** The answer was lost: give back everything the receipt holds. */
  whole: boolean;
  refunds: { userId: number; units: number }[];
}

export function createUsageLedger(
  pool: pg.Pool,
  settings: AdmissionSettings,
  options: LedgerOptions = {},
): UsageLedger {
  const onSettleError = options.onSettleError ?? (() => {});
  const abandonedAfterMs = options.abandonedAfterMs ?? ABANDONED_AFTER_MS;
  const onRetry = options.onConflictRetry ?? (() => {});
  const retrying = <T>(statement: () => Promise<T>) => retryingConflicts(statement, onRetry);
  // Names this ledger's receipts: one per process (and per app in tests).
  const ledgerId = randomUUID();
  let statements = 0;
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    timers.add(timer);
  };

  // Give back: receipts open (requests unanswered), then due, then sent one statement at a time.
  const open = new Map<number, OpenReceipt>();
  let due: DueSettle[] = [];
  /** Settles that failed, tried again after SETTLE_RETRY_MS (or at the next flush). */
  const failed: DueSettle[] = [];
  let settling: Promise<void> | null = null;
  let gathering: NodeJS.Timeout | null = null;

  function retryFailedLater(): void {
    later(SETTLE_RETRY_MS, () => {
      due.push(...failed.splice(0));
      settleSoon();
    });
  }

  /** Settles what is due after SETTLE_GATHER_MS (not cancelled by stop: flush relies on it). */
  function settleSoon(): void {
    if (gathering !== null || settling !== null || due.length === 0) return;
    gathering = setTimeout(() => {
      gathering = null;
      void settleNow();
    }, SETTLE_GATHER_MS);
    gathering.unref();
  }

  /** One settle statement at a time, for everything due when it is sent. */
  function settleNow(): Promise<void> {
    if (settling !== null) return settling;
    if (due.length === 0) return Promise.resolve();
    settling = settle().finally(() => {
      settling = null;
      settleSoon();
    });
    return settling;
  }

  async function settle(): Promise<void> {
    const batch = due;
    due = [];
    const refunds = batch.flatMap((d) => d.refunds.map((r) => ({ statement: d.statement, ...r })));
    try {
      await retrying(() =>
        pool.query(
          'SELECT settle_usage_receipts($1::uuid, $2::bigint[], $3::boolean[], $4::bigint[], $5::bigint[], $6::integer[])',
          [
            ledgerId,
            batch.map((d) => d.statement),
            batch.map((d) => d.whole),
            refunds.map((r) => r.statement),
            refunds.map((r) => r.userId),
            refunds.map((r) => r.units),
          ],
        ),
      );
    } catch (err) {
      onSettleError(err);
      if (failed.length === 0) retryFailedLater();
      failed.push(...batch);
    }
  }

  function lost(statement: number): void {
    later(LOST_ANSWER_SETTLE_MS, () => {
      due.push({ statement, whole: true, refunds: [] });
      settleSoon();
    });
  }

  // Reserve: the requests that arrive while a statement runs are decided together by the next one.
  let waiting: { ask: AdmissionAsk; resolve(d: Reserved): void; reject(err: unknown): void }[] = [];
  /** A statement is in flight, or about to be sent at the end of this turn. */
  let busy = false;

  function sendSoon(): void {
    busy = true;
    setImmediate(send);
  }

  function send(): void {
    const batch = waiting.slice(0, MAX_BATCH);
    waiting = waiting.slice(MAX_BATCH);
    const statement = ++statements;
    retrying(() =>
      decideAdmissions(
        pool,
        settings,
        batch.map((w) => w.ask),
        { process: ledgerId, statement },
      ),
    )
      .then(
        (decided) => {
          const reserved = decided.filter((d) => d.reserved > 0).length;
          if (reserved > 0) open.set(statement, { unanswered: reserved, refunds: [] });
          for (const [i, w] of batch.entries()) {
            const d = decided[i]!;
            const ticket = d.reserved > 0 ? { statement, userId: d.userId!, month: d.month, units: d.reserved } : null;
            w.resolve({ ...d, ticket });
          }
        },
        (err: unknown) => {
          lost(statement);
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
    reserve(ask) {
      return new Promise((resolve, reject) => {
        waiting.push({ ask, resolve, reject });
        if (!busy) sendSoon();
      });
    },
    async reserveMore(ticket, units, monthlyQuota) {
      if (units <= 0) return true;
      const { rows } = await retrying(() =>
        pool.query('SELECT usage_reserve_more($1, $2::date, $3, $4) AS reserved', [
          ticket.userId,
          ticket.month,
          units,
          monthlyQuota,
        ]),
      );
      const reserved = rows[0]?.reserved === true;
      if (reserved) ticket.units += units;
      return reserved;
    },
    answered(ticket, counted) {
      const receipt = open.get(ticket.statement);
      if (!receipt) return;
      const back = ticket.units - Math.max(0, Math.min(ticket.units, counted));
      if (back > 0) receipt.refunds.push({ userId: ticket.userId, units: back });
      if (--receipt.unanswered > 0) return;
      open.delete(ticket.statement);
      due.push({ statement: ticket.statement, whole: false, refunds: receipt.refunds });
      settleSoon();
    },
    async flush() {
      due.push(...failed.splice(0));
      while (settling !== null || due.length > 0) await settleNow();
    },
    async prune() {
      const idleSeconds = Math.max(settings.limits.burst.windowSeconds, settings.limits.sustained.windowSeconds);
      const rate = await retrying(() =>
        pool.query<{ n: number }>('SELECT prune_idle_rate_limits($1) AS n', [idleSeconds]),
      );
      const abandoned = await retrying(() =>
        pool.query<{ n: number }>("SELECT refund_abandoned_usage_receipts($1 * interval '1 millisecond') AS n", [
          abandonedAfterMs,
        ]),
      );
      return { rateRows: rate.rows[0]!.n, abandonedReceipts: abandoned.rows[0]!.n };
    },
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
