import type { ProviderDescriptor } from '../types.js';
import { isObject, probeFailure } from '../probe-helpers.js';
import { FRANKFURTER } from './slug.js';

export { FRANKFURTER };

/** Frankfurter (keyless) exchange rates, the currency instant answer. Probe: the latest rates, base USD (free). */
export const frankfurter: ProviderDescriptor = {
  slug: FRANKFURTER,
  name: 'Frankfurter',
  group: 'instant',
  monitor: 'probe',
  requires: [],
  baseUrlVariables: ['FRANKFURTER_BASE_URL'],
  timeoutMs: 10_000,
  cacheTtlMs: 24 * 60 * 60_000,
  probe: (config) => ({
    provider: FRANKFURTER,
    request: { url: `${config.FRANKFURTER_BASE_URL}/latest?base=USD` },
    cacheTtlMs: 0,
    parse(body) {
      if (!isObject(body) || !isObject(body.rates) || Object.keys(body.rates).length === 0) {
        throw probeFailure(FRANKFURTER, 'no exchange rates in the answer');
      }
      return true;
    },
  }),
};
