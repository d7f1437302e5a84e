import type pg from 'pg';
import type { LatestRates } from '../../providers/frankfurter/latest.js';

/*
 * Exchange rates for the currency answer, kept in Postgres (table
 * currency_rates, units per 1 USD) and refreshed from Frankfurter at most
 * once a day:
 * - stored rates fetched within the last 24 h: served as they are;
 * - older or none: the feed is asked (one request at a time per instance;
 *   after a failure not again for a minute); on success the rows are
 *   replaced and served fresh; on failure the stored rates are served with
 *   `stale: true`, or there are none (null).
 * Reads are kept in memory for a few seconds so a burst of currency
 * queries costs one round trip. Database errors never fail the answer.
 */

export interface RateTable {
  base: 'USD';
  /** Units of each currency per 1 USD (USD included, = 1). */
  rates: Record<string, number>;
  /** The feed's date, `YYYY-MM-DD`. */
  date: string;
  fetchedAt: Date;
  /** The feed could not be reached and the stored rates are older than the refresh interval. */
  stale: boolean;
}

export interface RatesStore {
  /** The rates to answer with, or null when none are stored and the feed is down. */
  current(): Promise<RateTable | null>;
  /** Forgets the in-memory copy and the failure back-off (tests, after writing rows directly). */
  reset(): void;
}

export interface RatesStoreOptions {
  pool: pg.Pool;
  /** Asks the feed (through app.upstream, which records health); rejects when it is down. */
  fetchLatest(): Promise<LatestRates>;
  /** Where a failed refresh is told. */
  log?: { warn(obj: unknown, msg?: string): void };
  now?: () => number;
  /** Refresh interval (default 24 h). */
  maxAgeMs?: number;
  /** After a failed fetch, how long to serve what is stored without asking again (default 60 s). */
  retryAfterMs?: number;
  /** How long a read is reused in memory (default 10 s). */
  memoryMs?: number;
}

const DAY_MS = 24 * 60 * 60_000;

interface Stored {
  rates: Record<string, number>;
  date: string;
  fetchedAt: Date;
}

export function createRatesStore(options: RatesStoreOptions): RatesStore {
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? DAY_MS;
  const retryAfterMs = options.retryAfterMs ?? 60_000;
  const memoryMs = options.memoryMs ?? 10_000;
  let memory: { stored: Stored | null; readAt: number } | null = null;
  let lastFailure = -Infinity;
  let refreshing: Promise<Stored | null> | null = null;

  async function read(): Promise<Stored | null> {
    if (memory && now() - memory.readAt < memoryMs) return memory.stored;
    try {
      const { rows } = await options.pool.query<{ code: string; per_usd: number; rate_date: string; fetched_at: Date }>(
        "SELECT code, per_usd, to_char(rate_date, 'YYYY-MM-DD') AS rate_date, fetched_at FROM currency_rates",
      );
      let stored: Stored | null = null;
      if (rows.length > 0) {
        const rates: Record<string, number> = {};
        let date = '';
        let fetchedAt = new Date(0);
        for (const r of rows) {
          rates[r.code] = Number(r.per_usd);
          if (r.rate_date > date) date = r.rate_date;
          if (r.fetched_at > fetchedAt) fetchedAt = r.fetched_at;
        }
        rates.USD = 1;
        stored = { rates, date, fetchedAt };
      }
      memory = { stored, readAt: now() };
      return stored;
    } catch (err) {
      options.log?.warn({ err }, 'currency rates: could not read the stored rates');
      return memory?.stored ?? null;
    }
  }

  async function write(latest: LatestRates): Promise<Stored> {
    const perUsd = toUsdBase(latest);
    const codes = Object.keys(perUsd);
    const stored: Stored = { rates: perUsd, date: latest.date, fetchedAt: new Date(now()) };
    try {
      await options.pool.query(
        `INSERT INTO currency_rates (code, per_usd, rate_date, fetched_at)
         SELECT code, rate, $3::date, $4 FROM unnest($1::text[], $2::float8[]) AS t(code, rate)
         ON CONFLICT (code) DO UPDATE
           SET per_usd = EXCLUDED.per_usd, rate_date = EXCLUDED.rate_date, fetched_at = EXCLUDED.fetched_at`,
        [codes, codes.map((c) => perUsd[c]), latest.date, stored.fetchedAt],
      );
    } catch (err) {
      options.log?.warn({ err }, 'currency rates: could not store the fetched rates');
    }
    memory = { stored, readAt: now() };
    return stored;
  }

  function refresh(): Promise<Stored | null> {
    refreshing ??= options
      .fetchLatest()
      .then(write, () => {
        lastFailure = now();
        return null;
      })
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  }

  return {
    async current() {
      const stored = await read();
      const fresh = stored !== null && now() - stored.fetchedAt.getTime() < maxAgeMs;
      if (fresh) return { base: 'USD', ...stored, stale: false };
      if (now() - lastFailure >= retryAfterMs) {
        const fetched = await refresh();
        if (fetched) return { base: 'USD', ...fetched, stale: false };
      }
      return stored ? { base: 'USD', ...stored, stale: true } : null;
    },
    reset() {
      memory = null;
      lastFailure = -Infinity;
    },
  };
}

/** The feed's rates re-based on USD (Frankfurter is asked for base USD, but any base works). */
export function toUsdBase(latest: LatestRates): Record<string, number> {
  const usd = latest.base === 'USD' ? 1 : latest.rates.USD;
  if (!usd) throw new Error('the feed has no USD rate');
  const out: Record<string, number> = {};
  for (const [code, rate] of Object.entries(latest.rates)) out[code] = rate / usd;
  out.USD = 1;
  return out;
}
