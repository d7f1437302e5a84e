import type pg from 'pg';
import { withQueryTimeout } from '../db/pool.js';
import {
  type AlertRequest,
  type AlertTarget,
  alertRequest,
  alertTargetOf,
  type BudgetNotice,
  budgetRequest,
  type StateChange,
} from './formats.js';
import { targetOf } from './transitions.js';

/*
 * Sends the queued provider state changes (alert_outbox, transitions.ts) to
 * every ALERT_WEBHOOK_URLS target, from any instance, never on a request's
 * path:
 *
 * - a tick claims, per target, the due rows together with every fresh row of
 *   that target still inside its digest window (UPDATE … WHERE id IN (SELECT
 *   … FOR UPDATE SKIP LOCKED), which also sets a lease, under the target's
 *   advisory lock), so changes made at about the same time go out as ONE
 *   message in the target's format (formats.ts): the single change, or a
 *   digest of all of them (its text says per provider what changed since
 *   the last message). Two instances
 *   never claim the same row, nor split one batch;
 * - a 2xx deletes the rows; anything else (or no answer within the timeout)
 *   retries them after a growing delay (the window, doubled each attempt, at
 *   most an hour), and gives up after a day (logged);
 * - an instance that dies holding a lease leaves its rows to the others once
 *   the lease ends (the only case where a receiver may see a message twice);
 * - ticks run when this instance queued a change (after the window), when a
 *   retry is due, and at least every `pollMs` (changes queued by other
 *   instances or the CLI, leases ended). Each is a couple of indexed queries.
 *
 * Log lines name the target's host only: a webhook URL often holds a secret.
 */

type Log = {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
};

export interface AlertSenderOptions {
  pool: pg.Pool;
  urls: readonly string[];
  /** How long a change waits for others to join its message (ms); also the first retry delay. */
  windowMs: number;
  userAgent: string;
  log: Log;
  /** Display name and group of a provider slug. */
  describe(slug: string): { name: string; group: string };
  /** Names of the providers down now (Uptime Kuma's push reads an outage from them); may reject. */
  downNow?(): Promise<string[]>;
  pollMs?: number;
  /** Bound on one delivery (ms). */
  timeoutMs?: number;
  /** How long a claim keeps other instances off its rows (ms); above timeoutMs. */
  leaseMs?: number;
  maxBackoffMs?: number;
  /** A change still undelivered this long after it was queued is dropped (ms). */
  giveUpMs?: number;
  /** Changes in one message at most (more: several messages). */
  batchSize?: number;
}

export interface AlertSender {
  /** Begins the ticks (a first one at once: rows left over from before). */
  start(): void;
  /** This instance queued changes: tick once they are due. */
  wake(): void;
  /** Runs one tick now (tests). */
  tick(): Promise<void>;
  /** Stops ticking and abandons a delivery in flight (its rows return after the lease). */
  stop(): Promise<void>;
}

interface OutboxRow {
  id: string;
  provider: string;
  old_ok: boolean;
  new_ok: boolean;
  changed_at: Date;
  created_at: Date;
  attempts: number;
  /** Set on a budget notice (80 or 100), null on a state change. */
  budget_percent: number | null;
  budget_calls: string | null;
  budget_limit: string | null;
  budget_period: string | null;
  budget_top_user: string | null;
  budget_top_calls: string | null;
}

const STATEMENT_MS = 3000;
/** First key of the per-target advisory lock taken while claiming (the second: hashtext of the target). */
const CLAIM_LOCK = 1_936_287_082;

/**
 * The due rows of target $1 with every fresh row of it (attempts = 0: still in
 * its digest window), leased for $2 ms; at most $3.
 */
const CLAIM_SQL = `UPDATE alert_outbox o
    SET attempts = o.attempts + 1,
        next_attempt_at = clock_timestamp() + make_interval(secs => $2::float8 / 1000)
  WHERE o.id IN (
    SELECT id FROM alert_outbox
     WHERE target = $1 AND (next_attempt_at <= clock_timestamp() OR attempts = 0)
       AND EXISTS (SELECT 1 FROM alert_outbox WHERE target = $1 AND next_attempt_at <= clock_timestamp())
     ORDER BY id
     LIMIT $3
     FOR UPDATE SKIP LOCKED)
  RETURNING o.id, o.provider, o.old_ok, o.new_ok, o.changed_at, o.created_at, o.attempts,
            o.budget_percent, o.budget_calls, o.budget_limit, o.budget_period, o.budget_top_user, o.budget_top_calls`;
const PURGE_EVERY_MS = 3_600_000;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '?';
  }
}

export function createAlertSender(options: AlertSenderOptions): AlertSender {
  const { pool, log } = options;
  const windowMs = Math.max(0, options.windowMs);
  const pollMs = options.pollMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const leaseMs = Math.max(options.leaseMs ?? 60_000, timeoutMs + 1000);
  const maxBackoffMs = options.maxBackoffMs ?? 3_600_000;
  const giveUpMs = options.giveUpMs ?? 86_400_000;
  const batchSize = options.batchSize ?? 100;
  const targets = options.urls.map((url, i) => {
    const to: AlertTarget = alertTargetOf(url);
    return { to, target: targetOf(url), name: `#${i + 1} ${hostOf(url)} (${to.format})` };
  });
  const targetIds = targets.map((t) => t.target);

  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  let lastPurge = 0;
  const aborter = new AbortController();

  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
    pool.query<R>(withQueryTimeout({ text, values }, STATEMENT_MS));

  function schedule(delayMs: number): void {
    if (stopped) return;
    const delay = Math.max(0, Math.min(delayMs, pollMs));
    const at = Date.now() + delay;
    if (timer && timerAt <= at) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(() => {
      timer = undefined;
      timerAt = Number.POSITIVE_INFINITY;
      void run();
    }, delay);
    timer.unref();
  }

  /** One tick at a time; a request for another while one runs makes it run again after. */
  function run(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        let next = pollMs;
        try {
          next = await tickOnce();
        } catch (err) {
          log.warn({ err }, 'alerts: outbox unavailable; will retry');
          next = Math.max(windowMs, 1000);
        }
        schedule(next);
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  /** Sends what is due for every target; returns ms until the next row is due (at most pollMs). */
  async function tickOnce(): Promise<number> {
    for (const t of targets) {
      // Drain what is due, one message per claimed batch.
      for (;;) {
        if (stopped) return pollMs;
        const rows = await claim(t.target);
        if (rows.length === 0) break;
        // State changes go out as one message, each budget notice as its own.
        const changes = rows.filter((r) => r.budget_percent === null);
        const notices = rows.filter((r) => r.budget_percent !== null).map((r) => [r]);
        let delivered = true;
        for (const batch of changes.length > 0 ? [changes, ...notices] : notices) {
          if (!(await deliver(t, batch))) delivered = false;
        }
        if (!delivered) break;
      }
    }
    if (Date.now() - lastPurge > PURGE_EVERY_MS) {
      lastPurge = Date.now();
      // Rows of a target no instance sends to any more (a URL taken out of the configuration).
      await query('DELETE FROM alert_outbox WHERE created_at < now() - make_interval(secs => $1::float8 / 1000)', [
        giveUpMs * 2,
      ]);
    }
    const { rows } = await query<{ ms: number | null }>(
      `SELECT (EXTRACT(EPOCH FROM (min(next_attempt_at) - clock_timestamp())) * 1000)::float8 AS ms
         FROM alert_outbox WHERE target = ANY($1::text[])`,
      [targetIds],
    );
    const ms = rows[0]?.ms;
    // A little after the row is due (the database clock decides).
    return ms === null || ms === undefined ? pollMs : Math.min(pollMs, Math.max(0, ms) + 20);
  }

  /**
   * Claims the target's due rows with every fresh one, in a transaction that
   * first takes the target's advisory lock: two instances ticking at the same
   * moment would otherwise split one batch between them (SKIP LOCKED hands
   * each the rows the other has not locked yet) and send two messages. The
   * second waits for the first's claim to commit, then sees its leases.
   */
  async function claim(target: string): Promise<OutboxRow[]> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query(
        withQueryTimeout(
          { text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))', values: [CLAIM_LOCK, target] },
          STATEMENT_MS,
        ),
      );
      const { rows } = await client.query<OutboxRow>(
        withQueryTimeout({ text: CLAIM_SQL, values: [target, leaseMs, batchSize] }, STATEMENT_MS),
      );
      await client.query('COMMIT');
      return rows.sort((a, b) => Number(a.id) - Number(b.id));
    } catch (err) {
      broken = err as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      // A connection whose statement timed out is not given back to the pool.
      client.release(broken);
    }
  }

  function changeOf(row: OutboxRow): StateChange {
    const { name, group } = options.describe(row.provider);
    return {
      slug: row.provider,
      name,
      group,
      old_state: row.old_ok ? 'up' : 'down',
      new_state: row.new_ok ? 'up' : 'down',
      changed_at: row.changed_at.toISOString(),
    };
  }

  /** Posts one message for the rows; true when the target took it. */
  function noticeOf(row: OutboxRow): BudgetNotice {
    const { name, group } = options.describe(row.provider);
    return {
      slug: row.provider,
      name,
      group,
      percent: row.budget_percent!,
      calls: Number(row.budget_calls),
      budget: Number(row.budget_limit),
      period: row.budget_period === 'day' ? 'day' : 'month',
      spender: row.budget_top_user === null ? null : { user: row.budget_top_user, calls: Number(row.budget_top_calls) },
      at: row.changed_at.toISOString(),
    };
  }

  /** Posts one message for the rows (state changes, or one budget notice); true when the target took it or has no use for it. */
  async function deliver(t: (typeof targets)[number], rows: OutboxRow[]): Promise<boolean> {
    const ids = rows.map((r) => r.id);
    let request: AlertRequest | null;
    if (rows[0]!.budget_percent !== null) {
      request = budgetRequest(t.to, noticeOf(rows[0]!));
    } else {
      const changes = rows.map(changeOf);
      const downNow =
        t.to.format === 'uptime-kuma' && options.downNow ? await options.downNow().catch(() => undefined) : undefined;
      request = alertRequest(t.to, changes, downNow);
    }
    if (!request) {
      // A push monitor reads any call as up or down: a budget notice is not for it.
      await query('DELETE FROM alert_outbox WHERE id = ANY($1::bigint[])', [ids]);
      return true;
    }
    let failure = '';
    try {
      const res = await fetch(request.url, {
        method: request.method,
        headers: { ...request.headers, 'user-agent': options.userAgent },
        body: request.body,
        redirect: 'manual',
        signal: AbortSignal.any([aborter.signal, AbortSignal.timeout(timeoutMs)]),
      });
      await res.body?.cancel().catch(() => {});
      if (res.status >= 200 && res.status < 300) {
        await query('DELETE FROM alert_outbox WHERE id = ANY($1::bigint[])', [ids]);
        log.info({ target: t.name, changes: rows.length }, 'alerts: delivered');
        return true;
      }
      failure = `HTTP ${res.status}`;
    } catch (err) {
      if (stopped) return false;
      const e = err as { name?: string; cause?: { code?: string } };
      failure = e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.name ?? 'error');
    }
    const attempts = Math.max(...rows.map((r) => r.attempts));
    const oldest = Math.min(...rows.map((r) => r.created_at.getTime()));
    if (Date.now() - oldest > giveUpMs) {
      await query('DELETE FROM alert_outbox WHERE id = ANY($1::bigint[])', [ids]);
      log.error({ target: t.name, changes: rows.length, attempts, failure }, 'alerts: undeliverable, dropped');
      return false;
    }
    const delay = Math.min(maxBackoffMs, Math.max(windowMs, 100) * 2 ** (attempts - 1));
    await query(
      'UPDATE alert_outbox SET next_attempt_at = clock_timestamp() + make_interval(secs => $2::float8 / 1000) WHERE id = ANY($1::bigint[])',
      [ids, delay],
    );
    log.warn({ target: t.name, changes: rows.length, attempts, failure, retryInMs: delay }, 'alerts: delivery failed');
    return false;
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    wake() {
      schedule(windowMs + 20);
    },
    tick: () => run(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      aborter.abort();
      await running?.catch(() => {});
    },
  };
}
