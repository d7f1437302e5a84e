import type { ProviderDescriptor } from '../types.js';
import { TRIPADVISOR } from './slug.js';

export { TRIPADVISOR };

/** Tripadvisor Content API: location search, then details. */
export const tripadvisor: ProviderDescriptor = {
  slug: TRIPADVISOR,
  name: 'Tripadvisor',
  group: 'cards',
  monitor: 'query',
  requires: ['TRIPADVISOR_API_KEY'],
  baseUrlVariables: ['TRIPADVISOR_BASE_URL'],
  credentialParameters: ['key'],
  timeoutMs: 8000,
  cacheTtlMs: 60 * 60_000,
};
