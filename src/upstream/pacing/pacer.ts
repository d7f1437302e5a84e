import type pg from 'pg';
import type { LimitHeaders } from '../http.js';
import { type ProviderSlug, type ReportedLimits, UpstreamError, type LimitsReport } from '../../providers/types.js';
import { createLeaseSignals } from './lease-signals.js';
import { isPaced, type PacingPlan, spacingMs } from './plan.js';

/*
 * The shared pacer: every upstream call of a paced provider takes a slot
 * from the database (acquire_provider_call, one statement) before it is
 * made, so the pacing, concurrency and budget (and each user's share of it)
 * hold across all workers and instances (migrations/0012_upstream_pacing.sql,
 * 0014_provider_budget_shares.sql). A provider nothing limits costs nothing:
 * no statement is made for it.
 *
 * A call waits once: until its slot (the statement says when), or for a
 * freed lease when the provider's concurrency is taken (lease-signals.ts),
 * never past its bound. A wait cut short by its request gives the slot back
 * at once (abandon_provider_call): its lease, its budget unit, and its rate
 * slot when no later one was handed out.
 *
 * Providers that report their limits on their answers (Brave's X-RateLimit-*)
 * are paced by what they report, and on the upstream's own host by its
 * lowest plan's rate until the first report (`untilReported`). Once an answer
 * reports no limit, the process stops asking the database (and goes back to
 * it when an answer reports one again).
 */

/** A slot taken: give it back with what the answer said, or, for a call never made, abandon it. */
export interface CallPermit {
  /** Gives the slot back with what the answer reported (see Release). */
  release(outcome: CallOutcome): Release;
  /** The call was not made (its request gave up): its lease, budget unit and rate slot go back at once. */
  abandon(): Promise<void>;
  /** How long the caller still waits for the slot (this pacer waits for it in `admit`: absent). */
  waitMs?: number;
}

/** A released permit: the report being stored, and whether the caller's answer must wait for it. */
export interface Release {
  /** Settles once what the answer reported is stored (at once when nothing is to be stored). */
  written: Promise<void>;
  /**
   * The answer is the first this process learns that the provider is limited: the caller's answer
   * waits for the report, so that no call made after it (by any process) leaves unpaced, as one
   * would before the upstream's limits are stored (off its own host nothing paces it until then).
   */
  news: boolean;
}

const NOTHING: Release = { written: Promise.resolve(), news: false };

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
  /** The user who spent the most of it this period, and how many calls (null: calls made for no user). */
  topUser: { name: string; calls: number } | null;
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
   * the call. `user`: whose search makes the call (their share of a budget applies; none for
   * probes). Rejects with UpstreamError `paced` or `budget_exhausted` (nothing is recorded), or
   * with the signal's reason when it aborts the wait (the slot is given back).
   */
  admit(provider: ProviderSlug, maxWaitMs: number, signal?: AbortSignal, user?: number): Promise<CallPermit | null>;
  /**
   * Whether the provider's calls are limited as far as this process knows: paced or budgeted by
   * the configuration, or learnable and not (yet) shown unlimited by its latest answer.
   */
  limits(provider: ProviderSlug): boolean;
  /** Settles the reports still being written (tests, shutdown). */
  settled(): Promise<void>;
  /** Settles the reports and stops listening for freed leases. */
  close(): Promise<void>;
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
const SPACED_WINDOW_SECONDS = 10;
/** A call leaving later than this past its slot takes a later one (plan.ts: SLOT_MARGIN_MS covers it). */
const LATE_TOLERANCE_MS = 50;

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
  const signals = createLeaseSignals(pool, options.log);

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

  /** What acquire_provider_call answers. */
  interface AcquireRow {
    outcome: string;
    wait_ms: number;
    lease: string | null;
    calls: string | null;
    crossed: number;
    retry_ms: number;
    slot_ms: number | null;
    next_slot: number | null;
    period_start: Date | null;
    top_user: string | null;
    top_calls: string | null;
    queued_ms: number;
  }

  /** What a call that took a slot holds, to give back if it is never made. */
  interface Ticket {
    lease: bigint | null;
    slotMs: number;
    nextSlot: number | null;
    periodStart: Date | null;
  }

  function abandonTicket(provider: ProviderSlug, plan: PacingPlan, ticket: Ticket, user?: number): Promise<void> {
    if (ticket.lease !== null) signals.freed(provider);
    if (ticket.lease === null && ticket.nextSlot === null && ticket.periodStart === null) return Promise.resolve();
    return write(
      pool.query('SELECT abandon_provider_call($1, $2, $3, $4, $5, $6, $7)', [
        provider,
        ticket.lease === null ? null : ticket.lease.toString(),
        ticket.slotMs,
        ticket.nextSlot,
        plan.budget?.period ?? null,
        ticket.periodStart,
        user ?? null,
      ]),
    );
  }

  /** A later slot for a call too late for its own (updates the ticket); null when none is in time. */
  async function reslot(provider: ProviderSlug, ticket: Ticket, maxWaitMs: number): Promise<number | null> {
    const client = await pool.connect();
    try {
      const asked = performance.now();
      const { rows } = await client.query<{
        wait_ms: number | null;
        slot_ms: number | null;
        next_slot: number | null;
        queued_ms: number;
      }>('SELECT * FROM reslot_provider_call($1, $2, $3, $4)', [provider, ticket.slotMs, ticket.nextSlot, maxWaitMs]);
      client.release();
      const row = rows[0]!;
      if (row.wait_ms === null || row.slot_ms === null) return null;
      ticket.slotMs = row.slot_ms;
      ticket.nextSlot = row.next_slot;
      return asked + row.queued_ms + row.wait_ms;
    } catch (err) {
      client.release(true);
      throw err;
    }
  }

  async function acquire(
    provider: ProviderSlug,
    plan: PacingPlan,
    maxWaitMs: number,
    signal?: AbortSignal,
    user?: number,
  ): Promise<Ticket> {
    const until = performance.now() + maxWaitMs;
    for (;;) {
      // Timed from when the statement leaves, not while it waits for a connection of the pool.
      const client = await pool.connect();
      let asked: number;
      let row: AcquireRow;
      try {
        asked = performance.now();
        const { rows } = await client.query<AcquireRow>(
          'SELECT * FROM acquire_provider_call($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
          [
            provider,
            plan.slotMs,
            plan.explicitRate,
            // Used by the database only while the upstream has reported nothing.
            plan.provisionalMs,
            plan.concurrency,
            plan.holdMs,
            plan.budget?.period ?? null,
            plan.budget?.calls ?? null,
            user ?? null,
            plan.budget?.perUser ?? null,
            Math.max(0, until - asked),
          ],
        );
        row = rows[0]!;
        client.release();
      } catch (err) {
        // A client whose statement failed may be broken: it leaves the pool.
        client.release(true);
        throw err;
      }
      if (row.outcome === 'ok') {
        if (row.crossed > 0 && plan.budget) {
          options.onBudgetCrossed?.({
            provider,
            percent: row.crossed,
            calls: Number(row.calls),
            budget: plan.budget.calls,
            period: plan.budget.period,
            topUser: row.top_user === null ? null : { name: row.top_user, calls: Number(row.top_calls) },
          });
        }
        const ticket: Ticket = {
          lease: row.lease === null ? null : BigInt(row.lease),
          slotMs: row.slot_ms ?? 0,
          nextSlot: row.next_slot,
          periodStart: row.period_start,
        };
        // The slot's time here: the statement decided `queued_ms` after it was sent, and the slot is
        // `wait_ms` after that (early by at most the statement's way there, which the margin covers).
        let slotAt = asked + row.queued_ms + row.wait_ms;
        for (let reslots = 0; ; reslots++) {
          try {
            // One timed wait until the slot.
            const wait = slotAt - performance.now();
            if (wait > 0) await sleep(wait, signal);
            signal?.throwIfAborted();
          } catch (err) {
            await abandonTicket(provider, plan, ticket, user);
            throw err;
          }
          // A call leaving later than the tolerance past its slot could crowd the next one: it takes
          // the next free slot instead, keeping its lease and budget unit (one statement), once; late
          // again, its process is too busy to keep slots, and more statements would only add to it.
          if (ticket.nextSlot === null || performance.now() - slotAt <= LATE_TOLERANCE_MS) return ticket;
          const left = reslots === 0 ? Math.max(0, until - performance.now()) : -1;
          const next = await (left < 0 ? Promise.resolve(null) : reslot(provider, ticket, left)).catch(
            async (err: unknown) => {
              await abandonTicket(provider, plan, ticket, user);
              throw err;
            },
          );
          if (next === null) {
            await abandonTicket(provider, plan, ticket, user);
            throw new UpstreamError(
              provider,
              'paced',
              "no free slot under the provider's pacing in time",
              undefined,
              1,
            );
          }
          slotAt = next;
        }
      }
      const answered = performance.now();
      if (row.outcome === 'busy' && answered < until) {
        // One wait: until a lease frees (any process), the oldest one expires, or the wait's bound.
        await signals.wait(provider, Math.min(until - answered, Math.max(1, row.retry_ms)), signal);
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
      if (row.outcome === 'user_budget_exhausted') {
        throw new UpstreamError(
          provider,
          'budget_exhausted',
          `this user's share of the budget of calls is spent for this period (${seconds} s until it renews)`,
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

  function permit(
    provider: ProviderSlug,
    plan: PacingPlan,
    ticket: Ticket | null,
    viaDb: boolean,
    user?: number,
  ): CallPermit {
    let done = false;
    const lease = ticket?.lease ?? null;
    return {
      abandon() {
        if (done) return Promise.resolve();
        done = true;
        return ticket ? abandonTicket(provider, plan, ticket, user) : Promise.resolve();
      },
      release(outcome) {
        if (done) return NOTHING;
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
        if (lease !== null) signals.freed(provider);
        if (lease === null && !reported) return NOTHING;
        if (!viaDb && !reported) return NOTHING;
        const written = reportBehind(
          provider,
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
        return { written, news: reported && now === 'limited' && before !== 'limited' };
      },
    };
  }

  /**
   * The report of a call, written behind its caller's answer (the runner does not wait for it); the
   * next call of the same provider in this process waits for it in `admit`, so it is paced by what
   * the answer reported.
   */
  const reporting = new Map<ProviderSlug, Promise<void>>();
  function reportBehind(provider: ProviderSlug, statement: Promise<unknown>): Promise<void> {
    const written = write(statement);
    reporting.set(provider, written);
    void written.finally(() => {
      if (reporting.get(provider) === written) reporting.delete(provider);
    });
    return written;
  }

  async function admit(
    provider: ProviderSlug,
    maxWaitMs: number,
    signal?: AbortSignal,
    user?: number,
  ): Promise<CallPermit | null> {
    const plan = options.plans.get(provider);
    if (!plan) return null;
    const pending = reporting.get(provider);
    if (pending) await pending;
    const paced = isPaced(plan);
    if (!plan.learnable) {
      if (!paced) return null;
      const ticket = await acquire(provider, plan, maxWaitMs, signal, user);
      return permit(provider, plan, ticket, true, user);
    }
    const state = known.get(provider) ?? 'unknown';
    if (state === 'unlimited' && !paced) return permit(provider, plan, null, false, user);
    const ticket = await acquire(provider, plan, maxWaitMs, signal, user);
    return permit(provider, plan, ticket, true, user);
  }

  const settled = async () => {
    while (writes.size > 0) await Promise.all([...writes]);
  };
  return {
    admit,
    limits(provider) {
      const plan = options.plans.get(provider);
      if (!plan) return false;
      return isPaced(plan) || (plan.learnable && known.get(provider) !== 'unlimited');
    },
    settled,
    async close() {
      await settled();
      await signals.close();
    },
  };
}
