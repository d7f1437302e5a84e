import type pg from 'pg';
import type { ProviderDescriptor } from '../providers/types.js';
import type { ProviderSlug } from '../providers/types.js';

/*
 * Reading provider health. Every read is bounded in time: when the database
 * is unreachable the caller learns it (DatabaseUnavailable) within
 * `timeoutMs`, never hangs. Concurrent readers share one query, and a result
 * is reused for `cacheMs` (dropped as soon as this process or, told through
 * the cluster, another worker writes; another instance's write shows after
 * at most `cacheMs`).
 */

export type HealthState = 'up' | 'down' | 'unknown';

export interface StatusRow {
  provider: string;
  ok: boolean;
  source: string;
  lastError: string;
  lastOkAt: Date | null;
  checkedAt: Date;
}

export interface ProviderHealth {
  slug: ProviderSlug;
  state: HealthState;
  checkedAt: Date | null;
  lastOkAt: Date | null;
  lastError: string;
  source: string;
}

export class DatabaseUnavailable extends Error {
  override name = 'DatabaseUnavailable';
}

export interface StatusReaderOptions {
  timeoutMs?: number;
  cacheMs?: number;
}

export interface StatusReader {
  /** All status rows by provider. Rejects with DatabaseUnavailable. */
  rows(): Promise<Map<string, StatusRow>>;
  invalidate(): void;
}

export function createStatusReader(pool: pg.Pool, options: StatusReaderOptions = {}): StatusReader {
  const timeoutMs = options.timeoutMs ?? 1500;
  const cacheMs = options.cacheMs ?? 200;
  let cached: { at: number; rows: Map<string, StatusRow> } | undefined;
  let inFlight: Promise<Map<string, StatusRow>> | undefined;
  let generation = 0;

  async function load(): Promise<Map<string, StatusRow>> {
    const gen = generation;
    const rows = await withDeadline(
      pool.query<{
        provider: string;
        ok: boolean;
        source: string;
        last_error: string;
        last_ok_at: Date | null;
        checked_at: Date;
      }>({
        text: 'SELECT provider, ok, source, last_error, last_ok_at, checked_at FROM provider_status',
        query_timeout: timeoutMs,
      } as pg.QueryConfig),
      timeoutMs,
    );
    const map = new Map<string, StatusRow>();
    for (const r of rows.rows) {
      map.set(r.provider, {
        provider: r.provider,
        ok: r.ok,
        source: r.source,
        lastError: r.last_error,
        lastOkAt: r.last_ok_at,
        checkedAt: r.checked_at,
      });
    }
    if (gen === generation) cached = { at: performance.now(), rows: map };
    return map;
  }

  return {
    async rows() {
      if (cached && performance.now() - cached.at < cacheMs) return cached.rows;
      if (!inFlight) {
        inFlight = load().finally(() => {
          inFlight = undefined;
        });
      }
      return inFlight;
    },
    invalidate() {
      generation++;
      cached = undefined;
    },
  };
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DatabaseUnavailable('database read timed out')), ms);
      }),
    ]);
  } catch (err) {
    work.catch(() => {});
    throw err instanceof DatabaseUnavailable ? err : new DatabaseUnavailable((err as Error).message);
  } finally {
    clearTimeout(timer);
  }
}

/** The health of each given provider from the rows: no row means never observed. */
export function healthOf(providers: readonly ProviderDescriptor[], rows: Map<string, StatusRow>): ProviderHealth[] {
  return providers.map((p) => {
    const row = rows.get(p.slug);
    if (!row) return { slug: p.slug, state: 'unknown', checkedAt: null, lastOkAt: null, lastError: '', source: '' };
    return {
      slug: p.slug,
      state: row.ok ? 'up' : 'down',
      checkedAt: row.checkedAt,
      lastOkAt: row.lastOkAt,
      lastError: row.ok ? '' : row.lastError,
      source: row.source,
    };
  });
}

/** ISO 8601 UTC with Z, or null. */
export function isoOrNull(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}

export interface HistoryBucket {
  provider: string;
  hour: Date;
  successes: number;
  failures: number;
  latencySumMs: number;
  latencyMaxMs: number;
}

/** Hourly buckets since `since`, oldest first. */
export async function readHistory(pool: pg.Pool, since: Date, timeoutMs = 1500): Promise<HistoryBucket[]> {
  const res = await withDeadline(
    pool.query<{
      provider: string;
      hour: Date;
      successes: number;
      failures: number;
      latency_sum_ms: string;
      latency_max_ms: number;
    }>({
      text: `SELECT provider, hour, successes, failures, latency_sum_ms, latency_max_ms
               FROM provider_history WHERE hour >= $1 ORDER BY hour`,
      values: [since],
      query_timeout: timeoutMs,
    } as pg.QueryConfig),
    timeoutMs,
  );
  return res.rows.map((r) => ({
    provider: r.provider,
    hour: r.hour,
    successes: r.successes,
    failures: r.failures,
    latencySumMs: Number(r.latency_sum_ms),
    latencyMaxMs: r.latency_max_ms,
  }));
}
