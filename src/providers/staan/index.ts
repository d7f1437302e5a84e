import type { ProviderDescriptor } from '../types.js';
import { STAAN } from './slug.js';
import { staanAccepts, staanCall } from './web.js';

export { STAAN };

export const staan: ProviderDescriptor = {
  slug: STAAN,
  name: 'Staan',
  group: 'engine',
  monitor: 'query',
  requires: ['STAAN_API_KEY'],
  baseUrlVariables: ['STAAN_BASE_URL'],
  timeoutMs: 3000,
  cacheTtlMs: 60 * 60_000,
  calls: { web: { call: staanCall, accepts: staanAccepts } },
};
