import type { PlaceFacts } from '../../contracts/place.js';
import { isObject } from '../probe-helpers.js';
import type { ProviderCall } from '../types.js';
import { nominatimPlaceFacts } from './place.js';
import type { NominatimConfig } from './search.js';
import { NOMINATIM } from './slug.js';

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

/**
 * A coordinate for an upstream request: JavaScript's `String(n)` (`2`,
 * `48.8584`), in fixed notation where that would use an exponent
 * (`0.0000001` rather than `1e-7`).
 */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n) || n === 0) return '0';
  const s = String(n);
  const e = s.indexOf('e');
  if (e < 0) return s;
  const exponent = Number(s.slice(e + 1));
  if (exponent >= 0) return BigInt(n).toString();
  const mantissa = s.slice(0, e);
  const dot = mantissa.indexOf('.');
  const decimals = (dot < 0 ? 0 : mantissa.length - dot - 1) - exponent;
  return n.toFixed(Math.min(100, decimals)).replace(/0+$/, '').replace(/\.$/, '');
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
    provider: NOMINATIM,
    request: { method: 'GET', url: `${config.NOMINATIM_BASE_URL}/reverse?${nominatimReverseParams(query)}` },
    parse: parseNominatimReverse,
  };
}
