import type { PlaceFacts } from '../../contracts/place.js';
import { formatNumber } from '../../contracts/place.js';
import { isObject } from '../probe-helpers.js';
import type { ProviderCall } from '../types.js';
import { nominatimPlaceFacts } from './place.js';
import type { NominatimConfig } from './search.js';

/*
 * Nominatim reverse geocoding (provider_13): GET {NOMINATIM_BASE_URL}/reverse
 * lat, lon (rounded to 6 places by the caller), format=jsonv2,
 * accept-language (when a language is given).
 * Response: one place in the search shape, or `{"error": "Unable to geocode"}`
 * (HTTP 200) when nothing is there: null. Cached for the provider's TTL per
 * request URL.
 *
 * Sources: Nominatim API documentation (Reverse; its "Unable to geocode"
 * answer).
 */

export interface NominatimReverseQuery {
  lat: number;
  lon: number;
  lang: string;
}

export function nominatimReverseParams(query: NominatimReverseQuery): URLSearchParams {
  const params = new URLSearchParams({
    lat: formatNumber(query.lat),
    lon: formatNumber(query.lon),
    format: 'jsonv2',
  });
  if (query.lang) params.set('accept-language', query.lang);
  return params;
}

/** The place at the point, or null when Nominatim found nothing; throws when the answer is not an object. */
export function parseNominatimReverse(json: unknown): PlaceFacts | null {
  if (!isObject(json)) throw new Error('expected a place object');
  if ('error' in json) return null;
  return nominatimPlaceFacts(json);
}

export function nominatimReverseCall(
  query: NominatimReverseQuery,
  config: NominatimConfig,
): ProviderCall<PlaceFacts | null> {
  return {
    provider: 'provider_13',
    request: { method: 'GET', url: `${config.NOMINATIM_BASE_URL}/reverse?${nominatimReverseParams(query)}` },
    parse: parseNominatimReverse,
  };
}
