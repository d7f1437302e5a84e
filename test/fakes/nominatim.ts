import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Nominatim (OpenStreetMap): /status?format=json (the free health
 * endpoint), /search?format=jsonv2 and /reverse, in the real shapes
 * (lat/lon and boundingbox as strings, `category` in jsonv2).
 */

export interface NominatimPlace {
  name: string;
  display_name: string;
  lat: string;
  lon: string;
  category: string;
  type: string;
  addresstype: string;
  importance: number;
  /** [south, north, west, east] as strings; default ±0.2° lat / ±0.3° lon around the point; null: omitted. */
  boundingbox?: string[] | null;
}

export const PLACES: NominatimPlace[] = [
  {
    name: 'Berlin',
    display_name: 'Berlin, Deutschland',
    lat: '52.5108850',
    lon: '13.3989367',
    category: 'boundary',
    type: 'administrative',
    addresstype: 'city',
    importance: 0.85,
  },
  {
    name: 'Paris',
    display_name: 'Paris, Île-de-France, France métropolitaine, France',
    lat: '48.8534951',
    lon: '2.3483915',
    category: 'boundary',
    type: 'administrative',
    addresstype: 'city',
    importance: 0.88,
  },
];

function toJsonV2(p: NominatimPlace, i: number) {
  const lat = Number(p.lat);
  const lon = Number(p.lon);
  const boundingbox =
    p.boundingbox === undefined
      ? [String(lat - 0.2), String(lat + 0.2), String(lon - 0.3), String(lon + 0.3)]
      : p.boundingbox;
  return {
    place_id: 159947916 + i,
    licence: 'Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright',
    osm_type: 'relation',
    osm_id: 62422 + i,
    lat: p.lat,
    lon: p.lon,
    category: p.category,
    type: p.type,
    place_rank: 8,
    importance: p.importance,
    addresstype: p.addresstype,
    name: p.name,
    display_name: p.display_name,
    ...(boundingbox === null ? {} : { boundingbox }),
  };
}

export interface NominatimFake extends FakeServer {
  /** The JSON /status answer (status 0 = OK; 700–705 = a failure such as "Database connection failed"). */
  status: { status: number; message: string };
  /**
   * The places it knows (default PLACES): /search returns those whose
   * display_name contains q (case-insensitive), at most `limit`; /reverse the
   * first within 1° of the point, else {"error": "Unable to geocode"} (HTTP 200).
   */
  places: NominatimPlace[];
}

export async function startNominatimFake(options: FakeServerOptions = {}): Promise<NominatimFake> {
  const state = { status: { status: 0, message: 'OK' }, places: PLACES };
  const server = await startFakeServer(
    {
      'GET /status': (req) => {
        if (req.query.get('format') !== 'json') {
          return state.status.status === 0 ? { body: 'OK' } : { status: 500, body: `ERROR: ${state.status.message}` };
        }
        return {
          body: {
            ...state.status,
            data_updated: '2025-11-21T08:00:00+00:00',
            software_version: '5.1.0',
            database_version: '5.1.0',
          },
        };
      },
      'GET /search': (req) => {
        const q = (req.query.get('q') ?? '').toLowerCase();
        const limit = Number(req.query.get('limit') ?? 10);
        const hits = state.places.map(toJsonV2).filter((p) => q && p.display_name.toLowerCase().includes(q));
        return { body: hits.slice(0, limit) };
      },
      'GET /reverse': (req) => {
        const lat = Number(req.query.get('lat'));
        const lon = Number(req.query.get('lon'));
        const near = state.places
          .map(toJsonV2)
          .find((p) => Math.abs(Number(p.lat) - lat) < 1 && Math.abs(Number(p.lon) - lon) < 1);
        return { body: near ?? { error: 'Unable to geocode' } };
      },
    },
    options,
  );
  Object.defineProperty(server, 'status', {
    get: () => state.status,
    set: (v: NominatimFake['status']) => {
      state.status = v;
    },
    enumerable: true,
  });
  Object.defineProperty(server, 'places', {
    get: () => state.places,
    set: (v: NominatimFake['places']) => {
      state.places = v;
    },
    enumerable: true,
  });
  return server as NominatimFake;
}
