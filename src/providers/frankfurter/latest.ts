import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { body, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { FRANKFURTER } from './slug.js';

/*
 * Frankfurter (slug `currency`): GET {FRANKFURTER_BASE_URL}/latest?base=USD
 * → {amount, base, date, rates: {CODE: units per 1 base}} (ECB reference
 * rates, updated once per working day). The answer is kept in Postgres by
 * the currency feature, so the runner does not cache it (cacheTtlMs 0).
 *
 * Sources: Frankfurter documentation (latest rates endpoint) and the ECB
 * reference-rate schedule it follows.
 */

export interface LatestRates {
  base: string;
  /** The feed's date, `YYYY-MM-DD`. */
  date: string;
  /** Units of each currency per 1 `base`; the base itself is included as 1. */
  rates: Record<string, number>;
}

const CODE = /^[A-Z]{3}$/;

const schema = body({
  base: text,
  date: text,
  rates: z.record(z.string(), z.unknown()),
});

/** Throws when there are no usable rates (a bad response). Entries that are not positive numbers are dropped. */
export function parseLatest(json: unknown, base = 'USD'): LatestRates {
  const data = schema.parse(json);
  const rates: Record<string, number> = {};
  for (const [code, value] of Object.entries(data.rates)) {
    if (CODE.test(code) && typeof value === 'number' && Number.isFinite(value) && value > 0) rates[code] = value;
  }
  if (Object.keys(rates).length === 0) throw new Error('no exchange rates in the answer');
  const feedBase = CODE.test(data.base) ? data.base : base;
  rates[feedBase] = 1;
  const date = /^\d{4}-\d{2}-\d{2}$/.test(data.date) ? data.date : new Date().toISOString().slice(0, 10);
  return { base: feedBase, date, rates };
}

export function latestRatesCall(config: Pick<Config, 'FRANKFURTER_BASE_URL'>, base = 'USD'): ProviderCall<LatestRates> {
  return {
    provider: FRANKFURTER,
    request: { method: 'GET', url: `${config.FRANKFURTER_BASE_URL}/latest?base=${encodeURIComponent(base)}` },
    parse: (json) => parseLatest(json, base),
    cacheTtlMs: 0,
  };
}
