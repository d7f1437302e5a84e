import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { RatingBubble, TripadvisorCard, TripadvisorHit } from '../../contracts/cards.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { TRIPADVISOR } from './slug.js';

/*
 * Tripadvisor Content API (provider_11), base TRIPADVISOR_BASE_URL (…/api/v1),
 * key in the query string (`key`):
 *
 * 1. GET /location/search?searchQuery=<q, ≤500 chars>&category=hotels|
 *    restaurants|attractions (when the query names one)&language=<lang>
 *    -> data[]: location_id, name, address_obj {city, address_string…}
 * 2. GET /location/{location_id}/details?language=<lang>&currency=USD
 *    -> name, description, web_url, address_obj.address_string, ancestors[]
 *    {level, name} (the town), rating ("4.5"), num_reviews ("1234"),
 *    latitude / longitude (strings).
 * Errors: HTTP 4xx with {"error": {"message", "type", "code"}} (also
 * accepted in a 200, as a failure).
 *
 * Sources: Tripadvisor Content API reference (Location Search, Location
 * Details, error object).
 */

export const QUERY_MAX_LENGTH = 500;

export type TripadvisorCategory = 'hotels' | 'restaurants' | 'attractions';

/** Languages the Content API answers in (plain codes); anything else asks in English. */
const LANGUAGES = new Set([
  'ar',
  'da',
  'de',
  'el',
  'en',
  'es',
  'fr',
  'it',
  'ja',
  'ko',
  'nl',
  'no',
  'pt',
  'ru',
  'sv',
  'th',
  'tr',
  'vi',
  'zh',
]);

export function tripadvisorLanguage(lang: string): string {
  return LANGUAGES.has(lang) ? lang : 'en';
}

export type TripadvisorConfig = Pick<Config, 'TRIPADVISOR_BASE_URL' | 'TRIPADVISOR_API_KEY'>;

function rejectError(json: unknown): void {
  if (json !== null && typeof json === 'object' && !Array.isArray(json) && 'error' in json) {
    const err = (json as { error: unknown }).error;
    const what = err !== null && typeof err === 'object' && 'type' in err ? String(err.type) : 'error';
    throw new Error(`API error "${what.slice(0, 60)}"`);
  }
}

const address = nested({ street1: text, city: text, state: text, country: text, address_string: text });

const hitSchema = z.object({ location_id: text, name: text, address_obj: address });
const searchSchema = body({ data: list(hitSchema) });

export function parseTripadvisorSearch(json: unknown): TripadvisorHit[] {
  rejectError(json);
  const hits: TripadvisorHit[] = [];
  for (const h of searchSchema.parse(json).data) {
    if (!/^\d+$/.test(h.location_id) || !h.name) continue;
    const a = h.address_obj;
    const place = [a.address_string, a.city].filter(Boolean).join(' ');
    hits.push({ location_id: h.location_id, name: h.name, place });
  }
  return hits;
}

export function tripadvisorSearchCall(
  q: string,
  category: TripadvisorCategory | '',
  language: string,
  config: TripadvisorConfig,
): ProviderCall<TripadvisorHit[]> {
  const params = new URLSearchParams({ key: config.TRIPADVISOR_API_KEY, searchQuery: q.slice(0, QUERY_MAX_LENGTH) });
  if (category) params.set('category', category);
  params.set('language', language);
  return {
    provider: TRIPADVISOR,
    request: { url: `${config.TRIPADVISOR_BASE_URL}/location/search?${params}` },
    parse: parseTripadvisorSearch,
    cacheTtlMs: 0,
  };
}

const detailsSchema = body({
  name: text,
  description: text,
  web_url: text,
  address_obj: address,
  ancestors: list(z.object({ level: text, name: text })),
  rating: text,
  num_reviews: text,
  latitude: text,
  longitude: text,
});

/** Five bubbles for a rating out of 5: full from .75 of a bubble, half from .25. */
export function ratingBubbles(rating: number): RatingBubble[] {
  const out: RatingBubble[] = [];
  for (let i = 0; i < 5; i++) out.push(rating >= i + 0.75 ? 'full' : rating >= i + 0.25 ? 'half' : 'empty');
  return out;
}

function number(value: string): number | null {
  if (value.trim() === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

const round6 = (n: number | null) => (n === null ? null : Math.round(n * 1e6) / 1e6);

const TOWN_LEVELS = new Set(['city', 'municipality', 'town', 'village', 'neighborhood']);

export function parseTripadvisorDetails(json: unknown): TripadvisorCard {
  rejectError(json);
  const d = detailsSchema.parse(json);
  const rating = number(d.rating);
  const validRating = rating !== null && rating > 0 && rating <= 5 ? rating : null;
  const reviews = number(d.num_reviews);
  const town = d.ancestors.find((a) => TOWN_LEVELS.has(a.level.toLowerCase()) && a.name)?.name;
  const lat = number(d.latitude);
  const lon = number(d.longitude);
  const located = lat !== null && lon !== null && Math.abs(lat) <= 90 && Math.abs(lon) <= 180;
  return {
    name: d.name.trim(),
    geo: (town ?? d.address_obj.city).trim(),
    address: d.address_obj.address_string.trim(),
    rating: validRating,
    rating_bubbles: validRating === null ? [] : ratingBubbles(validRating),
    num_reviews: reviews !== null && reviews > 0 ? Math.floor(reviews) : 0,
    description: d.description.trim(),
    url: d.web_url.trim(),
    latitude: located ? round6(lat) : null,
    longitude: located ? round6(lon) : null,
  };
}

export function tripadvisorDetailsCall(
  locationId: string,
  language: string,
  config: TripadvisorConfig,
): ProviderCall<TripadvisorCard> {
  const params = new URLSearchParams({ key: config.TRIPADVISOR_API_KEY, language, currency: 'USD' });
  return {
    provider: TRIPADVISOR,
    request: {
      url: `${config.TRIPADVISOR_BASE_URL}/location/${encodeURIComponent(locationId)}/details?${params}`,
    },
    parse: parseTripadvisorDetails,
    cacheTtlMs: 0,
  };
}
