import type pg from 'pg';
import { oneLine } from './redact.js';
import type { ProviderSlug } from '../providers/types.js';

/*
 * Write-behind recording of provider health. `record()` is synchronous and
 * never throws: the request that observed the outcome never waits for the
 * database and never fails because of it.
 *
 * - provider_status (one row per provider) holds the latest observation by
 *   observation time, whichever process or instance made it. Each process
 *   keeps its own latest observation per provider and writes them all at
 *   most once per `statusWriteMs` (a second), only when it observed
 *   something: one transaction, under one advisory lock shared by every
 *   writer, that reads the stored rows and upserts (an older observation
 *   never replaces a newer one; its success still counts for last_ok_at).
 *   A row whose up/down state the write changed is a transition, decided
 *   against the stored state rather than this process's own last write;
 *   `onTransitions` runs in the same transaction (alerts/transitions.ts
 *   queues the webhooks there), so each transition is reported exactly once.
 * - provider_history (hourly buckets): counted in memory and added to the
 *   database in one batch every `historyFlushMs`; buckets older than the
 *   retention are deleted.
 * Database errors are logged and swallowed. Unwritten observations and
 * buckets are kept: the status write is retried after a growing delay (at
 * most 30 s), the history with its next batch.
 */

export type ObservationSource = 'query' | 'probe';

export interface Observation {
  provider: ProviderSlug;
  ok: boolean;
  /** Failure text (for the signed-in status page only; cut to 300 characters). */
  error?: string;
  latencyMs: number;
  source: ObservationSource;
  /** When it happened; default now. */
  at?: Date;
}

/** A change of a provider's stored state from up to down or back, made by one status write. */
export interface Transition {
  provider: ProviderSlug;
  /** The stored state before the write. */
  wasOk: boolean;
  ok: boolean;
  /** When the observation that changed it was made. */
  at: Date;
}

/** What one status write did (told to the onStatusWritten listeners). */
export interface StatusWrite {
  providers: readonly ProviderSlug[];
  transitions: readonly Transition[];
}

export interface HealthRecorderOptions {
  /** Least time between two provider_status writes of this recorder (ms); observations meanwhile collapse to the latest per provider. */
  statusWriteMs?: number;
  historyFlushMs?: number;
  retentionDays?: number;
  /** Bound on each write statement (ms). */
  statementTimeoutMs?: number;
  log?: { warn(obj: unknown, msg?: string): void; debug(obj: unknown, msg?: string): void };
  /** Monotonic clock (ms) spacing the status writes; tests move it. */
  clock?: () => number;
  /**
   * Runs inside a status write's transaction with the transitions it made, before the commit
   * (alerts/transitions.ts: queues them for the webhooks). A failure rolls the write back.
   */
  onTransitions?: (client: pg.PoolClient, transitions: readonly Transition[]) => Promise<void>;
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

/** Advisory lock key held by every provider_status write (arbitrary, constant: "sift provider status"). */
const STATUS_LOCK_KEY = 7_262_817_304;
/** Bounds of the delay before a failed status write is tried again (doubling from the spacing). */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 30_000;

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
  private readonly statusWriteMs: number;
  private readonly retentionDays: number;
  private readonly statementTimeoutMs: number;
  private readonly clock: () => number;
  /** The latest observation per provider not written yet. */
  private pendingStatus = new Map<ProviderSlug, StatusUpdate>();
  /** Clock time before which the next status write waits (spacing, or the back-off after a failure). */
  private nextStatusWriteAt = Number.NEGATIVE_INFINITY;
  private statusFailures = 0;
  private buckets = new Map<string, Bucket>();
  private statusTimer: NodeJS.Timeout | undefined;
  private readonly historyTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private lastPrune = 0;
  private closed = false;
  private readonly listeners: ((written: StatusWrite) => void)[] = [];
  private readonly log: HealthRecorderOptions['log'];
  private readonly onTransitions: HealthRecorderOptions['onTransitions'];

  constructor(
    private readonly pool: pg.Pool,
    options: HealthRecorderOptions = {},
  ) {
    this.statusWriteMs = Math.max(0, options.statusWriteMs ?? 1000);
    this.retentionDays = options.retentionDays ?? 30;
    this.statementTimeoutMs = options.statementTimeoutMs ?? 3000;
    this.clock = options.clock ?? (() => performance.now());
    this.log = options.log;
    this.onTransitions = options.onTransitions;
    const every = options.historyFlushMs ?? 30_000;
    if (every > 0) {
      this.historyTimer = setInterval(() => void this.enqueue(() => this.writeHistory(true)), every);
      this.historyTimer.unref();
    }
  }

  /** Called after each committed provider_status write (readers drop their caches; alerts wake). */
  onStatusWritten(listener: (written: StatusWrite) => void): void {
    this.listeners.push(listener);
  }

  /** Records one outcome. Never throws, never waits. */
  record(obs: Observation): void {
    if (this.closed) return;
    const at = obs.at ?? new Date();
    this.count(obs.provider, at, obs.ok, obs.latencyMs);
    this.keepLatest({
      provider: obs.provider,
      ok: obs.ok,
      source: obs.source,
      lastError: obs.ok ? '' : oneLine(obs.error || 'failed', LAST_ERROR_MAX),
      lastOkAt: obs.ok ? at : null,
      checkedAt: at,
    });
    this.scheduleStatusWrite();
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
    clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    this.closed = true;
  }

  /** Keeps the newer of the pending observation and `next` (by observation time), and the later success. */
  private keepLatest(next: StatusUpdate): void {
    const cur = this.pendingStatus.get(next.provider);
    const lastOkAt = latest(cur?.lastOkAt ?? null, next.lastOkAt);
    if (cur && cur.checkedAt > next.checkedAt) cur.lastOkAt = lastOkAt;
    else this.pendingStatus.set(next.provider, { ...next, lastOkAt });
  }

  private scheduleStatusWrite(): void {
    if (this.statusTimer || this.closed) return;
    const wait = Math.max(0, this.nextStatusWriteAt - this.clock());
    // Even "now" waits for the end of the turn, so that the observations of one turn share a write.
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      void this.enqueue(() => this.writeStatus());
    }, wait);
    this.statusTimer.unref();
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

  private async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A connection lost while the client is checked out is reported on it (and to the query that
    // fails with it): without a listener, that report would be an uncaught exception.
    const onClientError = () => {};
    client.on('error', onClientError);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL statement_timeout = ${Math.floor(this.statementTimeoutMs)}`);
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
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
    const updates = [...this.pendingStatus.values()];
    this.pendingStatus = new Map();
    let transitions: Transition[];
    try {
      transitions = await this.withClient(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [STATUS_LOCK_KEY]);
        const changed = await upsertStatus(client, updates);
        if (changed.length > 0 && this.onTransitions) await this.onTransitions(client, changed);
        return changed;
      });
    } catch (err) {
      // Nothing was stored: keep the observations (merged with newer ones) and try again later.
      for (const u of updates) this.keepLatest(u);
      this.statusFailures++;
      const delay = Math.max(this.statusWriteMs, RETRY_MIN_MS) * 2 ** (this.statusFailures - 1);
      this.nextStatusWriteAt = this.clock() + Math.min(RETRY_MAX_MS, delay);
      this.scheduleStatusWrite();
      throw err;
    }
    this.statusFailures = 0;
    this.nextStatusWriteAt = this.clock() + this.statusWriteMs;
    const written: StatusWrite = { providers: updates.map((u) => u.provider), transitions };
    for (const listener of this.listeners) listener(written);
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
 * Writes a batch of observations to provider_status and returns the
 * transitions it made. The newer observation wins per provider (checked_at);
 * an older one only moves last_ok_at forward. The caller holds the status
 * lock: the stored state read here is then the one the upsert replaces.
 */
async function upsertStatus(client: pg.PoolClient, updates: readonly StatusUpdate[]): Promise<Transition[]> {
  const { rows } = await client.query<{ provider: ProviderSlug; was_ok: boolean; ok: boolean; checked_at: Date }>(
    `WITH observed AS (
       SELECT * FROM unnest($1::text[], $2::boolean[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])
         AS o(provider, ok, source, last_error, last_ok_at, checked_at)
     ), stored AS (
       SELECT s.provider, s.ok FROM provider_status s JOIN observed USING (provider)
     ), written AS (
       INSERT INTO provider_status AS s (provider, ok, source, last_error, last_ok_at, checked_at)
       SELECT provider, ok, source, last_error, last_ok_at, checked_at FROM observed
       ON CONFLICT (provider) DO UPDATE SET
         ok = CASE WHEN s.checked_at <= EXCLUDED.checked_at THEN EXCLUDED.ok ELSE s.ok END,
         source = CASE WHEN s.checked_at <= EXCLUDED.checked_at THEN EXCLUDED.source ELSE s.source END,
         last_error = CASE WHEN s.checked_at <= EXCLUDED.checked_at THEN EXCLUDED.last_error ELSE s.last_error END,
         checked_at = GREATEST(s.checked_at, EXCLUDED.checked_at),
         last_ok_at = GREATEST(s.last_ok_at, EXCLUDED.last_ok_at)
       WHERE s.checked_at <= EXCLUDED.checked_at OR EXCLUDED.last_ok_at > coalesce(s.last_ok_at, '-infinity')
       RETURNING s.provider, s.ok, s.checked_at
     )
     SELECT w.provider, st.ok AS was_ok, w.ok, w.checked_at
       FROM written w JOIN stored st USING (provider)
      WHERE w.ok <> st.ok
      ORDER BY w.provider`,
    [
      updates.map((u) => u.provider),
      updates.map((u) => u.ok),
      updates.map((u) => u.source),
      updates.map((u) => u.lastError),
      updates.map((u) => u.lastOkAt),
      updates.map((u) => u.checkedAt),
    ],
  );
  return rows.map((r) => ({ provider: r.provider, wasOk: r.was_ok, ok: r.ok, at: r.checked_at }));
}

function latest(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}
