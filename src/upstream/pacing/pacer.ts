import type pg from 'pg';
import type { LimitHeaders } from '../http.js';
import { type ProviderSlug, type ReportedLimits, UpstreamError, type LimitsReport } from '../../providers/types.js';
import { isPaced, type PacingPlan, spacingMs } from './plan.js';

/*
 * The shared pacer: every upstream call of a paced provider takes a slot
 * from the database (acquire_provider_call, one statement) before it is
 * made, so the pacing, concurrency and budget hold across all workers and
 * instances (migrations/0013_baseline.sql). A provider nothing limits
 * costs nothing: no statement is made for it.
 *
 * Providers that report their limits on their answers (Brave's X-RateLimit-*)
 * are paced by what they report, and on the upstream's own host by its
 * lowest plan's rate until the first report (`untilReported`). Once an answer
 * reports no limit, the process stops asking the database (and goes back to
 * it when an answer reports one again).
 */

/** A slot taken: give it back with what the answer said. */
export interface CallPermit {
  /** Settles once what the answer reported is stored (at once when nothing is to be stored). */
  release(outcome: CallOutcome): Promise<void>;
}

/**
 * How a paced call ended: a 2xx answer's rate-limit headers ({} when it sent none), what the
 * upstream reports of its limits; undefined for a failure. A refusal's own headers are not learnt
 * from: its Retry-After suspends the provider (suspension.ts), as any 429 does.
 */
export type CallOutcome = LimitHeaders | undefined;

export interface BudgetCrossing {
  provider: ProviderSlug;
  /** 80 or 100. */
  percent: number;
  calls: number;
  budget: number;
  period: 'month' | 'day';
}

export interface PacerOptions {
  plans: ReadonlyMap<ProviderSlug, PacingPlan>;
  reports: ReadonlyMap<ProviderSlug, LimitsReport>;
  /** Told once per deployment when a budget reaches 80 % and 100 %. */
  onBudgetCrossed?: (crossing: BudgetCrossing) => void;
  log?: { warn(obj: unknown, msg?: string): void };
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface Pacer {
  /**
   * Waits for the provider's next slot if it comes within `maxWaitMs`; null when nothing limits
   * the call. Rejects with UpstreamError `paced` or `budget_exhausted` (nothing is recorded).
   */
  admit(provider: ProviderSlug, maxWaitMs: number, signal?: AbortSignal): Promise<CallPermit | null>;
  /** Settles the reports still being written (tests, shutdown). */
  settled(): Promise<void>;
}

/** Reported limits turned into what the database stores. */
interface Stored {
  intervalMs: number | null;
  rateSpentMs: number | null;
  periodLimit: number | null;
  periodRemaining: number | null;
  periodResetMs: number | null;
}

/** A margin on reported rates: requests spaced exactly at the limit can arrive closer than sent. */
const REPORTED_MARGIN = 1.05;
const REPORTED_SLACK_MS = 100;
const BUSY_RETRY_MS = 50;
const SPACED_WINDOW_SECONDS = 10;

export function storedReport(limits: ReportedLimits | null): Stored {
  const rate = limits?.rate;
  const period = limits?.period;
  return {
    // Windows of a few seconds are kept by spacing the calls evenly; a longer one (Pixabay's 100 a
    // minute) allows bursts, so it is kept by its count alone: no call once it reports none left.
    intervalMs:
      rate && rate.windowSeconds <= SPACED_WINDOW_SECONDS
        ? spacingMs(rate) * REPORTED_MARGIN + REPORTED_SLACK_MS
        : null,
    rateSpentMs: rate && rate.remaining <= 0 ? rate.resetSeconds * 1000 + REPORTED_SLACK_MS : null,
    periodLimit: period ? period.limit : null,
    periodRemaining: period ? period.remaining : null,
    periodResetMs: period ? period.resetSeconds * 1000 : null,
  };
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

type Knowledge = 'unknown' | 'limited' | 'unlimited';

export function createPacer(pool: pg.Pool, options: PacerOptions): Pacer {
  const sleep = options.sleep ?? defaultSleep;
  const known = new Map<ProviderSlug, Knowledge>();
  const writes = new Set<Promise<unknown>>();

  function write(p: Promise<unknown>): Promise<void> {
    const tracked = p.then(
      () => {},
      (err: unknown) => {
        options.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'pacing report not stored');
      },
    );
    writes.add(tracked);
    void tracked.finally(() => writes.delete(tracked));
    return tracked;
  }

  async function acquire(
    provider: ProviderSlug,
    plan: PacingPlan,
    maxWaitMs: number,
    signal?: AbortSignal,
  ): Promise<bigint | null> {
    const until = performance.now() + maxWaitMs;
    for (;;) {
      const left = Math.max(0, until - performance.now());
      const { rows } = await pool.query<{
        outcome: string;
        wait_ms: number;
        lease: string | null;
        calls: string | null;
        crossed: number;
        retry_ms: number;
      }>('SELECT * FROM acquire_provider_call($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
        provider,
        plan.intervalMs,
        plan.explicitRate,
        // Used by the database only while the upstream has reported nothing.
        plan.provisionalMs,
        plan.concurrency,
        plan.holdMs,
        plan.budget?.period ?? null,
        plan.budget?.calls ?? null,
        left,
      ]);
      const row = rows[0]!;
      if (row.outcome === 'ok') {
        if (row.crossed > 0 && plan.budget) {
          options.onBudgetCrossed?.({
            provider,
            percent: row.crossed,
            calls: Number(row.calls),
            budget: plan.budget.calls,
            period: plan.budget.period,
          });
        }
        if (row.wait_ms > 0) await sleep(row.wait_ms, signal);
        return row.lease === null ? null : BigInt(row.lease);
      }
      if (row.outcome === 'busy' && performance.now() + BUSY_RETRY_MS <= until) {
        await sleep(Math.min(BUSY_RETRY_MS, Math.max(1, row.retry_ms)), signal);
        continue;
      }
      const seconds = Math.max(1, Math.ceil(row.retry_ms / 1000));
      if (row.outcome === 'budget_exhausted') {
        throw new UpstreamError(
          provider,
          'budget_exhausted',
          `budget of calls spent for this period (${seconds} s until it renews)`,
          undefined,
          row.retry_ms,
        );
      }
      throw new UpstreamError(
        provider,
        'paced',
        `no free slot under the provider's pacing in time (next in ${seconds} s)`,
        undefined,
        Math.max(row.retry_ms, 1),
      );
    }
  }

  function permit(provider: ProviderSlug, plan: PacingPlan, lease: bigint | null, viaDb: boolean): CallPermit {
    let done = false;
    return {
      release(outcome) {
        if (done) return Promise.resolve();
        done = true;
        const report = options.reports.get(provider);
        const answered = outcome !== undefined;
        let limits: ReportedLimits | null = null;
        if (report && outcome) {
          try {
            limits = report.read(outcome);
          } catch {
            limits = null;
          }
        }
        const before = known.get(provider) ?? 'unknown';
        const stored = storedReport(limits);
        // What paces: a spaced short window, or a window it reports spent. A long window with calls
        // left (Pixabay's 100 a minute) paces nothing yet, so its calls need no slot.
        const pacing =
          limits !== null &&
          (stored.intervalMs !== null || stored.rateSpentMs !== null || (stored.periodRemaining ?? 1) <= 0);
        const now: Knowledge = pacing ? 'limited' : 'unlimited';
        // A learnable provider's answer says whether it is limited (a failure says nothing of it);
        // it is stored when it paces, or when it is news (the upstream's own count shows on /status).
        const reported = plan.learnable && answered && (now === 'limited' || before !== 'unlimited');
        if (plan.learnable && answered) known.set(provider, now);
        if (lease === null && !reported) return Promise.resolve();
        if (!viaDb && !reported) return Promise.resolve();
        return write(
          pool.query('SELECT report_provider_call($1, $2, $3, $4, $5, $6, $7, $8)', [
            provider,
            lease === null ? null : lease.toString(),
            reported,
            stored.intervalMs,
            stored.rateSpentMs,
            stored.periodLimit,
            stored.periodRemaining,
            stored.periodResetMs,
          ]),
        );
      },
    };
  }

  async function admit(provider: ProviderSlug, maxWaitMs: number, signal?: AbortSignal): Promise<CallPermit | null> {
    const plan = options.plans.get(provider);
    if (!plan) return null;
    const paced = isPaced(plan);
    if (!plan.learnable) {
      if (!paced) return null;
      const lease = await acquire(provider, plan, maxWaitMs, signal);
      return permit(provider, plan, lease, true);
    }
    const state = known.get(provider) ?? 'unknown';
    if (state === 'unlimited' && !paced) return permit(provider, plan, null, false);
    const lease = await acquire(provider, plan, maxWaitMs, signal);
    return permit(provider, plan, lease, true);
  }

  return {
    admit,
    async settled() {
      while (writes.size > 0) await Promise.all([...writes]);
    },
  };
}
