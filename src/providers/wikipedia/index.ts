import type { ProviderDescriptor } from '../types.js';
import { WIKIPEDIA } from './slug.js';

export { WIKIPEDIA };

/** Wikipedia (keyless): search, then the page summary, on the {lang} wiki. */
export const wikipedia: ProviderDescriptor = {
  slug: WIKIPEDIA,
  name: 'Wikipedia',
  group: 'cards',
  monitor: 'query',
  requires: [],
  baseUrlVariables: ['WIKIPEDIA_BASE_URL'],
  timeoutMs: 5000,
  cacheTtlMs: 60 * 60_000,
};
