import type { ProviderDescriptor } from '../types.js';
import { WIKIDATA } from './slug.js';

export { WIKIDATA };

/** Wikidata (keyless): classifies the Wikipedia subject for the cards. */
export const wikidata: ProviderDescriptor = {
  slug: WIKIDATA,
  name: 'Wikidata',
  group: 'cards',
  monitor: 'query',
  requires: [],
  baseUrlVariables: ['WIKIDATA_BASE_URL'],
  timeoutMs: 5000,
  cacheTtlMs: 60 * 60_000,
};
