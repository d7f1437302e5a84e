import { z } from 'zod';
import type { Config } from '../config/index.js';
import { buildPlace, coordinatePlace, type Place, round6 } from '../contracts/place.js';
import { nominatimReverseCall } from '../providers/nominatim/reverse.js';
import { nominatimSearchCall } from '../providers/nominatim/search.js';
import type { ProviderDirectory, Upstream } from '../providers/types.js';
import { UpstreamError } from '../providers/types.js';
import { allFailed, notConfigured, type SearchOutcome } from './outcome.js';
import { langSchema, MESSAGES, parseInteger, Q_MAX_LENGTH } from './params.js';

/*
 * GET /api/v1/maps/ (spec 2.6, 4.2; docs/api.md):
 *
 * - Geocode mode: `q` required, `limit` an integer clamped to 1..50 (default
 *   10), `lang` sent as accept-language; one Nominatim search (provider_13).
 *   `{query, places}`. When Nominatim fails: 502 (an outage never reads as
 *   "nothing matched"); when the public server's rate gate is full: 503 with
 *   Retry-After.
 * - Reverse mode, when `lat` and `lon` are both non-empty after strip (even
 *   with `q`: coordinates win): each a finite number within -90..90 /
 *   -180..180, else 400 naming the field. One Nominatim /reverse lookup;
 *   `{query: "", places: [place]}`. `label`, else `q`, names the place when
 *   given. When Nominatim fails, is busy, is not configured or finds nothing,
 *   the place is built from the coordinates alone (named by label, q or ""):
 *   still 200.
 */

export const LIMIT_DEFAULT = 10;
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 50;
/** The original's message, keyed here by the field that is wrong. */
export const COORDINATES_MESSAGE = 'lat and lon must be valid coordinates.';

const stripped = z
  .string()
  .optional()
  .transform((raw) => (raw === undefined ? '' : raw.trim()));

/** Python's float() syntax for decimal numbers (underscores between digits allowed); no nan/inf. */
const DECIMAL = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;

/** A coordinate within ±`max`, or null when it is not a finite number in range. */
export function parseCoordinate(raw: string, max: number): number | null {
  if (!DECIMAL.test(raw)) return null;
  const n = Number(raw.replaceAll('_', ''));
  return Number.isFinite(n) && Math.abs(n) <= max ? n : null;
}

function tooLong(s: string): boolean {
  return s.length > Q_MAX_LENGTH && [...s].length > Q_MAX_LENGTH;
}

export type MapsRequest =
  | { mode: 'geocode'; q: string; limit: number; lang: string }
  | { mode: 'reverse'; lat: number; lon: number; name: string; lang: string };

type Fields = { q: string; limit?: string | undefined; lang: string; lat: string; lon: string; label: string };

/** The request the fields describe, or one message per invalid field (in schema order). */
export function interpretMaps(
  f: Fields,
): { ok: true; request: MapsRequest } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  if (tooLong(f.q)) errors.q = MESSAGES.qTooLong;
  if (f.lat !== '' && f.lon !== '') {
    const lat = parseCoordinate(f.lat, 90);
    const lon = parseCoordinate(f.lon, 180);
    if (lat === null) errors.lat = COORDINATES_MESSAGE;
    if (lon === null) errors.lon = COORDINATES_MESSAGE;
    if (tooLong(f.label)) errors.label = MESSAGES.qTooLong;
    if (lat === null || lon === null || Object.keys(errors).length > 0) return { ok: false, errors };
    return {
      ok: true,
      request: { mode: 'reverse', lat: round6(lat), lon: round6(lon), name: f.label || f.q, lang: f.lang },
    };
  }
  if (f.q === '') errors.q = MESSAGES.required;
  let limit = LIMIT_DEFAULT;
  if (f.limit !== undefined) {
    const n = parseInteger(f.limit);
    if (n === null) errors.limit = MESSAGES.integer;
    else limit = Math.min(LIMIT_MAX, Math.max(LIMIT_MIN, n));
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, request: { mode: 'geocode', q: f.q, limit, lang: f.lang } };
}

/** Query string of GET /api/v1/maps/ (the checks depend on the mode, so they run over the whole object). */
export const mapsQuerySchema = z
  .object({
    q: stripped.meta({
      description: `Place to look up (required in geocode mode, at most ${Q_MAX_LENGTH} characters); names the place in reverse mode.`,
    }),
    limit: z
      .string()
      .optional()
      .meta({
        description: `Geocode mode: places to return, an integer clamped to ${LIMIT_MIN}..${LIMIT_MAX} (default ${LIMIT_DEFAULT}).`,
        type: 'integer',
        minimum: LIMIT_MIN,
        maximum: LIMIT_MAX,
      }),
    lang: langSchema,
    lat: stripped.meta({
      description: 'Reverse mode (with lon): latitude, -90 to 90.',
      type: 'number',
      minimum: -90,
      maximum: 90,
    }),
    lon: stripped.meta({
      description: 'Reverse mode (with lat): longitude, -180 to 180.',
      type: 'number',
      minimum: -180,
      maximum: 180,
    }),
    label: stripped.meta({ description: 'Reverse mode: the name of the place (default: q).' }),
  })
  .superRefine((fields, ctx) => {
    const r = interpretMaps(fields);
    if (r.ok) return;
    for (const [field, message] of Object.entries(r.errors)) ctx.addIssue({ code: 'custom', path: [field], message });
  });

export type MapsParams = z.output<typeof mapsQuerySchema>;

export interface MapsResponse {
  query: string;
  places: Place[];
}

export interface MapsDeps {
  config: Config;
  upstream: Upstream;
  providers: ProviderDirectory;
}

export function busyDetail(seconds: number): string {
  return `The maps provider is busy (the public OpenStreetMap Nominatim server allows one request per second). Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
}

export async function searchMaps(deps: MapsDeps, params: MapsParams): Promise<SearchOutcome<MapsResponse>> {
  const r = interpretMaps(params);
  // The schema already refused what interpretMaps refuses.
  if (!r.ok) throw new Error('maps parameters were not validated');
  const request = r.request;

  if (request.mode === 'reverse') {
    const { lat, lon, name, lang } = request;
    let place = coordinatePlace(lat, lon, name);
    if (deps.providers.isConfigured('provider_13')) {
      try {
        const facts = await deps.upstream.call(nominatimReverseCall({ lat, lon, lang }, deps.config));
        if (facts) place = buildPlace(name ? Object.assign({}, facts, { name }) : facts);
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        // Failed, timed out or busy: the coordinates alone.
      }
    }
    return { status: 200, body: { query: '', places: [place] } };
  }

  if (!deps.providers.isConfigured('provider_13'))
    return notConfigured(deps.providers, ['provider_13'], 'geocoding provider');
  try {
    const places = await deps.upstream.call(nominatimSearchCall(request, deps.config));
    return { status: 200, body: { query: request.q, places } };
  } catch (err) {
    // No slot under the provider's pacing in time (the public server allows one request a second).
    if (err instanceof UpstreamError && err.kind === 'paced') {
      const seconds = Math.max(1, Math.ceil((err.retryAfterMs ?? 1000) / 1000));
      return { status: 503, body: { detail: busyDetail(seconds) }, headers: { 'Retry-After': String(seconds) } };
    }
    if (err instanceof UpstreamError) return allFailed([{ engine: 'provider_13', reason: err.reason }]);
    throw err;
  }
}
