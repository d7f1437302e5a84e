import type { ProviderDescriptor } from '../types.js';
import { probeFailure } from '../probe-helpers.js';
import { LIBRETRANSLATE } from './slug.js';

export { LIBRETRANSLATE };

/** LibreTranslate at LIBRETRANSLATE_URL (API key optional). Probe: GET /languages (free). */
export const libreTranslate: ProviderDescriptor = {
  slug: LIBRETRANSLATE,
  name: 'LibreTranslate',
  group: 'translate',
  monitor: 'probe',
  requires: ['LIBRETRANSLATE_URL'],
  optional: ['LIBRETRANSLATE_API_KEY'],
  baseUrlVariables: ['LIBRETRANSLATE_URL'],
  credentialParameters: ['api_key'],
  timeoutMs: 10_000,
  cacheTtlMs: 60 * 60_000,
  probe: (config) => ({
    provider: LIBRETRANSLATE,
    request: { url: `${config.LIBRETRANSLATE_URL}/languages` },
    cacheTtlMs: 0,
    parse(body) {
      if (!Array.isArray(body) || body.length === 0) throw probeFailure(LIBRETRANSLATE, 'empty language list');
      return true;
    },
  }),
};
