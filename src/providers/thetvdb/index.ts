import type { ProviderDescriptor } from '../types.js';

/** TheTVDB v4: login token, then search and the extended record. */
export const thetvdb: ProviderDescriptor = {
  slug: 'provider_10',
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
