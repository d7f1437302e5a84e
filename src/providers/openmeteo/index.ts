import type { ProviderDescriptor } from '../types.js';
import { isObject, probeFailure } from '../probe-helpers.js';
import { OPEN_METEO } from './slug.js';

export { OPEN_METEO };

/**
 * Open-Meteo (keyless), the weather instant answer: geocoding, then the
 * forecast. Probe: a geocoding lookup of "Paris" (free).
 */
export const openMeteo: ProviderDescriptor = {
  slug: OPEN_METEO,
  name: 'Open-Meteo',
  group: 'instant',
  monitor: 'probe',
  requires: [],
  baseUrlVariables: ['OPENMETEO_BASE_URL', 'OPENMETEO_GEOCODING_URL'],
  timeoutMs: 8000,
  cacheTtlMs: 60 * 60_000,
  // The free API: 600 calls a minute, 10,000 a day (non-commercial use).
  terms: {
    source: 'https://open-meteo.com/en/terms',
    hosts: ['api.open-meteo.com', 'geocoding-api.open-meteo.com'],
    rate: { limit: 600, windowSeconds: 60 },
    budget: () => ({ period: 'day', calls: 10_000 }),
  },
  probe: (config) => ({
    provider: OPEN_METEO,
    request: { url: `${config.OPENMETEO_GEOCODING_URL}/v1/search?name=Paris&count=1&language=en&format=json` },
    cacheTtlMs: 0,
    parse(body) {
      if (!isObject(body) || !Array.isArray(body.results) || body.results.length === 0) {
        throw probeFailure(OPEN_METEO, 'geocoding lookup returned no place');
      }
      return true;
    },
  }),
};
