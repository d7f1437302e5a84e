import type { ProviderDescriptor } from '../types.js';
import { MOJEEK } from './slug.js';
import { mojeekCall } from './web.js';

export { MOJEEK };

export const mojeek: ProviderDescriptor = {
  slug: MOJEEK,
  name: 'Mojeek',
  group: 'engine',
  monitor: 'query',
  requires: ['MOJEEK_API_KEY'],
  baseUrlVariables: ['MOJEEK_BASE_URL'],
  credentialParameters: ['api_key'],
  timeoutMs: 3000,
  cacheTtlMs: 60 * 60_000,
  calls: { web: { call: mojeekCall } },
};
