import type { Config } from '../config/index.js';
import type { Place } from '../contracts/place.js';
import { NOMINATIM } from '../providers/nominatim/index.js';
import { nominatimReverseCall } from '../providers/nominatim/reverse.js';
import { nominatimSearchCall } from '../providers/nominatim/search.js';
import type { ProviderDirectory, Upstream } from '../providers/types.js';
import { UpstreamError } from '../providers/types.js';
import { allFailed, notConfigured, type SearchOutcome } from './outcome.js';
import { buildPlace, coordinatePlace } from './place.js';
import { interpretMaps, type MapsParams } from './queries.js';

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
    if (deps.providers.isConfigured(NOMINATIM)) {
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

  if (!deps.providers.isConfigured(NOMINATIM)) return notConfigured(deps.providers, [NOMINATIM], 'geocoding provider');
  try {
    const found = await deps.upstream.call(nominatimSearchCall(request, deps.config));
    const places = found.map((facts) => buildPlace(facts));
    return { status: 200, body: { query: request.q, places } };
  } catch (err) {
    // No slot under the provider's pacing in time (the public server allows one request a second).
    if (err instanceof UpstreamError && err.kind === 'paced') {
      const seconds = Math.max(1, Math.ceil((err.retryAfterMs ?? 1000) / 1000));
      return { status: 503, body: { detail: busyDetail(seconds) }, headers: { 'Retry-After': String(seconds) } };
    }
    if (err instanceof UpstreamError) return allFailed([err.unresponsive()]);
    throw err;
  }
}
