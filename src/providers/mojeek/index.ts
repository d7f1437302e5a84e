import type { ProviderDescriptor } from '../types.js';
import { mojeekCall } from './web.js';

export const mojeek: ProviderDescriptor = {
  slug: 'provider_02',
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
