import type { ProviderDescriptor } from '../types.js';
import { MARGINALIA } from './slug.js';
import { marginaliaCall } from './web.js';

export { MARGINALIA };

export const marginalia: ProviderDescriptor = {
  slug: MARGINALIA,
  name: 'Marginalia',
  group: 'engine',
  monitor: 'query',
  requires: ['MARGINALIA_API_KEY'],
  baseUrlVariables: ['MARGINALIA_BASE_URL'],
  // Marginalia's free key, shared by everyone: not a secret to keep out of answers and logs.
  publicCredentials: { MARGINALIA_API_KEY: 'public' },
  timeoutMs: 3000,
  cacheTtlMs: 60 * 60_000,
  calls: { web: { call: marginaliaCall } },
};
