import type { ProviderDescriptor } from '../types.js';
import { THETVDB } from './slug.js';

export { THETVDB };

/** TheTVDB v4: login token, then search and the extended record. */
export const thetvdb: ProviderDescriptor = {
  slug: THETVDB,
  name: 'TheTVDB',
  group: 'cards',
  monitor: 'query',
  requires: ['THETVDB_API_KEY'],
  optional: ['THETVDB_PIN'],
  baseUrlVariables: ['THETVDB_BASE_URL'],
  credentialParameters: ['apikey', 'pin'],
  timeoutMs: 8000,
  cacheTtlMs: 60 * 60_000,
};
