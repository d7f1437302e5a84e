import type pg from 'pg';
import { oneLine } from './redact.js';
import type { ProviderSlug } from './types.js';

/*
 * Write-behind recording of provider health. `record()` is synchronous and
 * never throws: the request that observed the outcome never waits for the
 * database and never fails because of it.
 *
 * - provider_status (one row per provider): written at once when the outcome
 *   differs from the last one written, otherwise at most once per throttle
 *   window (a minute). Several observations waiting for the same write
 *   collapse into one.
 * - provider_history (hourly buckets): counted in memory and added to the
 *   database in one batch every `historyFlushMs`; buckets older than the
 *   retention are deleted.
 * Database errors are logged and swallowed; a failed history batch is kept
 * for the next attempt.
 */

export type ObservationSource = 'query' | 'probe';

export interface Observation {
  provider: ProviderSlug;
  ok: boolean;
  /** Failure text (safe to show operators; cut to 300 characters). */
  error?: string;
  latencyMs: number;
  source: ObservationSource;
  /** When it happened; default now. */
  at?: Date;
}

export interface HealthRecorderOptions {
  /** Minimum time between two writes of the same outcome for one provider (ms). */
  throttleMs?: number;
  historyFlushMs?: number;
  retentionDays?: number;
  /** Bound on each write statement (ms). */
  statementTimeoutMs?: number;
  log?: { warn(obj: unknown, msg?: string): void; debug(obj: unknown, msg?: string): void };
  /** Monotonic clock for the throttle (ms); tests move it. */
  clock?: () => number;
  /**
   * Writes the provider_status rows inside the recorder's transaction instead of the plain upsert
   * (alerts/transitions.ts: the same upsert, which also queues state changes for the webhooks).
   */
  statusWriter?: (client: pg.PoolClient, rows: readonly StatusUpdate[]) => Promise<void>;
}

/** One provider_status row to write. */
export interface StatusUpdate {
  provider: ProviderSlug;
  ok: boolean;
  source: ObservationSource;
  lastError: string;
  lastOkAt: Date | null;
  checkedAt: Date;
}

export const LAST_ERROR_MAX = 300;

interface PendingStatus {
  ok: boolean;
  source: ObservationSource;
  lastError: string;
  lastOkAt: Date | null;
  checkedAt: Date;
}

interface Bucket {
  provider: ProviderSlug;
  hour: number;
  successes: number;
  failures: number;
  latencySum: number;
  latencyMax: number;
}

const HOUR = 3_600_000;

export class HealthRecorder {
  private readonly throttleMs: number;
  private readonly retentionDays: number;
  private readonly statementTimeoutMs: number;
  private readonly clock: () => number;
  /** Last outcome written (or being written) per provider, and when. */
  private readonly lastWritten = new Map<ProviderSlug, { ok: boolean; at: number }>();
  private readonly pendingStatus = new Map<ProviderSlug, PendingStatus>();
  private buckets = new Map<string, Bucket>();
  private statusTimer: NodeJS.Timeout | undefined;
  private readonly historyTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private closed = false;
  private readonly listeners: (() => void)[] = [];
  private readonly log: HealthRecorderOptions['log'];
  private readonly statusWriter: HealthRecorderOptions['statusWriter'];

  constructor(
    private readonly pool: pg.Pool,
    options: HealthRecorderOptions = {},
  ) {
    this.throttleMs = options.throttleMs ?? 60_000;
    this.retentionDays = options.retentionDays ?? 30;
    this.statementTimeoutMs = options.statementTimeoutMs ?? 3000;
    this.clock = options.clock ?? (() => performance.now());
    this.log = options.log;
    this.statusWriter = options.statusWriter;
    const every = options.historyFlushMs ?? 30_000;
    if (every > 0) {
      this.historyTimer = setInterval(() => void this.enqueue(() => this.writeHistory(true)), every);
      this.historyTimer.unref();
    }
  }

  /** Called after provider_status rows were written (readers drop their caches). */
  onStatusWritten(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Records one outcome. Never throws, never waits. */
  record(obs: Observation): void {
    if (this.closed) return;
    const at = obs.at ?? new Date();
    const lastError = obs.ok ? '' : oneLine(obs.error || 'failed', LAST_ERROR_MAX);
    this.count(obs.provider, at, obs.ok, obs.latencyMs);

    const now = this.clock();
    const prev = this.lastWritten.get(obs.provider);
    if (prev && prev.ok === obs.ok && now - prev.at < this.throttleMs) return;
    this.lastWritten.set(obs.provider, { ok: obs.ok, at: now });

    const earlier = this.pendingStatus.get(obs.provider);
    const okAt = obs.ok ? at : null;
    this.pendingStatus.set(obs.provider, {
      ok: obs.ok,
      source: obs.source,
      lastError,
      lastOkAt: okAt ?? earlier?.lastOkAt ?? null,
      checkedAt: at,
    });
    if (!this.statusTimer) {
      this.statusTimer = setTimeout(() => {
        this.statusTimer = undefined;
        void this.enqueue(() => this.writeStatus());
      }, 0);
      this.statusTimer.unref();
    }
  }

  /** Writes everything pending (status rows and history buckets) now. Never throws. */
  async flush(): Promise<void> {
    if (this.statusTimer) {
      clearTimeout(this.statusTimer);
      this.statusTimer = undefined;
    }
    await this.enqueue(async () => {
      await this.writeStatus();
      await this.writeHistory();
    });
  }

  /** Stops the timers and writes what is pending, waiting at most `timeoutMs` for the database. */
  async close(timeoutMs = 5000): Promise<void> {
    if (this.historyTimer) clearInterval(this.historyTimer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.closed = true;
  }

  /** Forgets the throttle (tests; also after a failed write, so the next outcome is written). */
  resetThrottle(provider?: ProviderSlug): void {
    if (provider) this.lastWritten.delete(provider);
    else this.lastWritten.clear();
  }

  private count(provider: ProviderSlug, at: Date, ok: boolean, latencyMs: number): void {
    const hour = Math.floor(at.getTime() / HOUR) * HOUR;
    const key = `${provider}|${hour}`;
    let b = this.buckets.get(key);
    if (!b) {
      b = { provider, hour, successes: 0, failures: 0, latencySum: 0, latencyMax: 0 };
      this.buckets.set(key, b);
    }
    const ms = Math.max(0, Math.round(latencyMs));
    if (ok) b.successes++;
    else b.failures++;
    b.latencySum += ms;
    if (ms > b.latencyMax) b.latencyMax = ms;
  }

  /** Writes run one at a time, in order; a failure never breaks the chain. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.writing.then(task).catch((err) => this.log?.warn({ err }, 'health write failed'));
    this.writing = next;
    return next;
  }

  private async withClient(fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    // A connection lost while the client is checked out is reported on it (and to the query that
    // fails with it): without a listener, that report would be an uncaught exception.
    const onClientError = () => {};
    client.on('error', onClientError);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL statement_timeout = ${Math.floor(this.statementTimeoutMs)}`);
      await fn(client);
      await client.query('COMMIT');
    } catch (err) {
      // No ROLLBACK: the connection is closed (release with the error), which rolls back, and a
      // ROLLBACK sent into a database that stopped answering would only wait for the query bound.
      broken = err as Error;
      throw err;
    } finally {
      client.off('error', onClientError);
      client.release(broken);
    }
  }

  private async writeStatus(): Promise<void> {
    if (this.pendingStatus.size === 0) return;
    const rows = [...this.pendingStatus.entries()];
    this.pendingStatus.clear();
    try {
      const updates = rows.map(([provider, r]) => ({ provider, ...r }));
      const write = this.statusWriter ?? upsertStatus;
      await this.withClient(async (client) => {
        await write(client, updates);
      });
    } catch (err) {
      // The outcome was not stored: let the next observation of these providers write again.
      for (const [p] of rows) this.lastWritten.delete(p);
      throw err;
    }
    for (const listener of this.listeners) listener();
  }

  private async writeHistory(prune = false): Promise<void> {
    const now = Date.now();
    const pruneDue = prune && now - this.lastPrune > HOUR;
    if (this.buckets.size === 0 && !pruneDue) return;
    const batch = [...this.buckets.values()];
    this.buckets = new Map();
    try {
      await this.withClient(async (client) => {
        if (batch.length > 0) {
          await client.query(
            `INSERT INTO provider_history AS h (provider, hour, successes, failures, latency_sum_ms, latency_max_ms)
             SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[], $5::bigint[], $6::int[])
             ON CONFLICT (provider, hour) DO UPDATE SET
               successes = h.successes + EXCLUDED.successes,
               failures = h.failures + EXCLUDED.failures,
               latency_sum_ms = h.latency_sum_ms + EXCLUDED.latency_sum_ms,
               latency_max_ms = GREATEST(h.latency_max_ms, EXCLUDED.latency_max_ms)`,
            [
              batch.map((b) => b.provider),
              batch.map((b) => new Date(b.hour)),
              batch.map((b) => b.successes),
              batch.map((b) => b.failures),
              batch.map((b) => b.latencySum),
              batch.map((b) => b.latencyMax),
            ],
          );
        }
        if (pruneDue) {
          await client.query(`DELETE FROM provider_history WHERE hour < now() - make_interval(days => $1)`, [
            this.retentionDays,
          ]);
        }
      });
      if (pruneDue) this.lastPrune = now;
    } catch (err) {
      this.restore(batch, now);
      throw err;
    }
  }

  /** Puts an unwritten batch back (merged with what arrived since), dropping buckets past retention. */
  private restore(batch: Bucket[], now: number): void {
    const oldest = now - this.retentionDays * 24 * HOUR;
    for (const b of batch) {
      if (b.hour < oldest) continue;
      const key = `${b.provider}|${b.hour}`;
      const cur = this.buckets.get(key);
      if (!cur) {
        this.buckets.set(key, b);
        continue;
      }
      cur.successes += b.successes;
      cur.failures += b.failures;
      cur.latencySum += b.latencySum;
      cur.latencyMax = Math.max(cur.latencyMax, b.latencyMax);
    }
  }
}

/**
 * Writes a batch of observations to provider_status, the newest one winning
 * per provider. `returning` (e.g. `RETURNING s.provider, s.ok`) is appended for
 * callers that need the rows as written (the alert transitions).
 */
export function upsertStatus<R extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.PoolClient,
  updates: readonly StatusUpdate[],
  returning = '',
): Promise<pg.QueryResult<R>> {
  return client.query<R>(
    `INSERT INTO provider_status AS s (provider, ok, source, last_error, last_ok_at, checked_at)
     SELECT * FROM unnest($1::text[], $2::boolean[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])
     ON CONFLICT (provider) DO UPDATE SET
       ok = EXCLUDED.ok,
       source = EXCLUDED.source,
       last_error = EXCLUDED.last_error,
       last_ok_at = GREATEST(EXCLUDED.last_ok_at, s.last_ok_at),
       checked_at = EXCLUDED.checked_at
     WHERE s.checked_at <= EXCLUDED.checked_at
     ${returning}`,
    [
      updates.map((u) => u.provider),
      updates.map((u) => u.ok),
      updates.map((u) => u.source),
      updates.map((u) => u.lastError),
      updates.map((u) => u.lastOkAt),
      updates.map((u) => u.checkedAt),
    ],
  );
}
