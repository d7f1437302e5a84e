import type { ProviderDescriptor } from '../types.js';
import { isObject, probeFailure } from '../probe-helpers.js';
import { NOMINATIM } from './slug.js';

export { NOMINATIM };

/** OpenStreetMap Nominatim (keyless): geocoding and reverse geocoding. Probe: GET /status?format=json. */
export const nominatim: ProviderDescriptor = {
  slug: NOMINATIM,
  name: 'OpenStreetMap Nominatim',
  group: 'maps',
  monitor: 'probe',
  requires: [],
  baseUrlVariables: ['NOMINATIM_BASE_URL'],
  timeoutMs: 6000,
  cacheTtlMs: 60 * 60_000,
  // The public server's usage policy: an absolute maximum of one request a second for the whole
  // application. A self-hosted NOMINATIM_BASE_URL is not bound by it.
  terms: {
    source: 'https://operations.osmfoundation.org/policies/nominatim/',
    hosts: ['nominatim.openstreetmap.org'],
    rate: { limit: 1, windowSeconds: 1 },
  },
  probe: (config) => ({
    provider: NOMINATIM,
    request: { url: `${config.NOMINATIM_BASE_URL}/status?format=json` },
    cacheTtlMs: 0,
    parse(body) {
      if (!isObject(body) || !('status' in body)) throw probeFailure(NOMINATIM, 'status not OK');
      if (body.status !== 0) {
        const message = typeof body.message === 'string' && body.message ? body.message : 'status not OK';
        throw probeFailure(NOMINATIM, `status ${String(body.status)}: ${message}`);
      }
      return true;
    },
  }),
};
