import type { ProviderDescriptor } from '../types.js';
import { marginaliaCall } from './web.js';

export const marginalia: ProviderDescriptor = {
  slug: 'provider_03',
  name: 'Marginalia',
  group: 'engine',
  monitor: 'query',
  // `public` is Marginalia's free shared key.
  requires: ['MARGINALIA_API_KEY'],
  baseUrlVariables: ['MARGINALIA_BASE_URL'],
  timeoutMs: 3000,
  cacheTtlMs: 60 * 60_000,
  calls: { web: { call: marginaliaCall } },
};
