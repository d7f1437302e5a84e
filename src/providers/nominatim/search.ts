import type { Config } from '../../config/index.js';
import type { PlaceFacts } from '../../contracts/place.js';
import type { ProviderCall } from '../types.js';
import { nominatimPlaceFacts } from './place.js';
import { NOMINATIM } from './slug.js';

/*
 * Nominatim search (provider_13): GET {NOMINATIM_BASE_URL}/search
 * q, format=jsonv2, limit, accept-language (when a language is given).
 * Response: an array of places (lat, lon, boundingbox entries as strings),
 * `[]` when nothing matched; each read as PlaceFacts (the search features shape
 * them into the maps place: search/place.ts).
 * Cached for the provider's TTL (1 h) per request URL, i.e. per
 * (query, limit, language) and base URL.
 *
 * Sources: Nominatim API documentation (Search; Output formats, jsonv2); the
 * OSMF usage policy for User-Agent.
 */

export interface NominatimSearchQuery {
  q: string;
  /** 1..50 (the caller clamps). */
  limit: number;
  /** Sent as `accept-language`; "" sends none. */
  lang: string;
}

export type NominatimConfig = Pick<Config, 'NOMINATIM_BASE_URL'>;

export function nominatimSearchParams(query: NominatimSearchQuery): URLSearchParams {
  const params = new URLSearchParams({ q: query.q, format: 'jsonv2', limit: String(query.limit) });
  if (query.lang) params.set('accept-language', query.lang);
  return params;
}

/** The places of a search answer (at most `limit`); throws when the answer is not an array. */
export function parseNominatimSearch(json: unknown, limit = Number.POSITIVE_INFINITY): PlaceFacts[] {
  if (!Array.isArray(json)) throw new Error('expected an array of places');
  const places: PlaceFacts[] = [];
  for (const item of json) {
    if (places.length >= limit) break;
    const facts = nominatimPlaceFacts(item);
    if (facts) places.push(facts);
  }
  return places;
}

/** One geocoding search (paced by the runner: the public server allows one request a second). */
export function nominatimSearchCall(query: NominatimSearchQuery, config: NominatimConfig): ProviderCall<PlaceFacts[]> {
  return {
    provider: NOMINATIM,
    request: { method: 'GET', url: `${config.NOMINATIM_BASE_URL}/search?${nominatimSearchParams(query)}` },
    parse: (json) => parseNominatimSearch(json, query.limit),
  };
}
