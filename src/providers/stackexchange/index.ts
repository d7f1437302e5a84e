import type { ProviderDescriptor } from '../types.js';
import { STACK_EXCHANGE } from './slug.js';

export { STACK_EXCHANGE };

/** Stack Exchange API 2.3 (key optional): question search, then the best answer. */
export const stackexchange: ProviderDescriptor = {
  slug: STACK_EXCHANGE,
  name: 'Stack Exchange',
  group: 'cards',
  monitor: 'query',
  requires: [],
  optional: ['STACKEXCHANGE_API_KEY'],
  baseUrlVariables: ['STACKEXCHANGE_BASE_URL'],
  credentialParameters: ['key'],
  timeoutMs: 8000,
  cacheTtlMs: 60 * 60_000,
  // 300 requests a day per IP without a key, 10,000 a day with one.
  terms: {
    source: 'https://api.stackexchange.com/docs/throttle',
    hosts: ['api.stackexchange.com'],
    budget: (config) => ({ period: 'day', calls: config.STACKEXCHANGE_API_KEY ? 10_000 : 300 }),
  },
};
