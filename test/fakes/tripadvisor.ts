import { anyPath, notFound } from './any-path.js';
import { type FakeReply, type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Tripadvisor Content API (upstreams.md section 10),
 * TRIPADVISOR_BASE_URL = `${url}/api/v1`, key in the query string (`key`):
 * - GET /api/v1/location/search?searchQuery=&category=&language=
 *   -> {"data": [{location_id, name, address_obj}]} (at most 10): locations
 *   in the category whose name or city shares a word with the query.
 * - GET /api/v1/location/{id}/details?language=&currency=
 *   -> the location's details (name, description, web_url, address_obj,
 *   ancestors, latitude, longitude, rating, num_reviews… as strings).
 * A wrong key: 401 {"error": {"message", "type", "code"}}.
 */

export interface FakeLocation {
  location_id: string;
  name: string;
  category: 'hotels' | 'restaurants' | 'attractions';
  street1?: string;
  city: string;
  country: string;
  postalcode?: string;
  description?: string;
  /** "4.5" (a string, as the API sends it); absent: unrated. */
  rating?: string;
  num_reviews?: string;
  latitude?: string;
  longitude?: string;
}

export interface TripadvisorFake extends FakeServer {
  baseUrl: string;
  key: string;
  addLocation(location: FakeLocation): void;
  searches(): { searchQuery: string; category: string; language: string }[];
  details(): string[];
}

export const TRIPADVISOR_KEY = 'tripadvisor-test-key';

function addressObj(l: FakeLocation) {
  const parts = [l.street1, [l.postalcode, l.city].filter(Boolean).join(' '), l.country].filter(Boolean);
  return {
    street1: l.street1 ?? '',
    street2: '',
    city: l.city,
    country: l.country,
    postalcode: l.postalcode ?? '',
    address_string: parts.join(', '),
  };
}

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

export async function startTripadvisorFake(
  options: FakeServerOptions & { key?: string } = {},
): Promise<TripadvisorFake> {
  const key = options.key ?? TRIPADVISOR_KEY;
  const locations: FakeLocation[] = [];
  const denied: FakeReply = {
    status: 401,
    body: { error: { message: 'Invalid or missing key', type: 'UnauthorizedException', code: 401 } },
  };

  const server = (await startFakeServer(
    anyPath((req) => {
      if (req.query.get('key') !== key) return denied;
      if (req.path === '/api/v1/location/search') {
        const q = words(req.query.get('searchQuery') ?? '');
        const category = req.query.get('category');
        const data = locations
          .filter((l) => !category || l.category === category)
          .filter((l) => [...words(`${l.name} ${l.city}`)].some((w) => q.has(w)))
          .slice(0, 10)
          .map((l) => ({ location_id: l.location_id, name: l.name, address_obj: addressObj(l) }));
        return { body: { data } };
      }
      const m = /^\/api\/v1\/location\/(\d+)\/details$/.exec(req.path);
      if (m) {
        const l = locations.find((x) => x.location_id === m[1]);
        if (!l) return { status: 404, body: { error: { message: 'Location not found', type: 'NotFound', code: 404 } } };
        const slug = l.name.replace(/[^A-Za-z0-9]+/g, '_');
        return {
          body: {
            location_id: l.location_id,
            name: l.name,
            ...(l.description !== undefined ? { description: l.description } : {}),
            web_url: `https://www.tripadvisor.com/Attraction_Review-g1-d${l.location_id}-Reviews-${slug}.html?m=66827`,
            address_obj: addressObj(l),
            ancestors: [
              { level: 'City', name: l.city, location_id: '187147' },
              { level: 'Country', name: l.country, location_id: '187070' },
            ],
            ...(l.latitude !== undefined ? { latitude: l.latitude } : {}),
            ...(l.longitude !== undefined ? { longitude: l.longitude } : {}),
            timezone: 'Europe/Paris',
            ...(l.rating !== undefined ? { rating: l.rating } : {}),
            ...(l.rating !== undefined
              ? {
                  rating_image_url: `https://www.tripadvisor.com/img/cdsi/img2/ratings/traveler/${l.rating}-66827-5.svg`,
                }
              : {}),
            num_reviews: l.num_reviews ?? '0',
            photo_count: '120',
            category: { name: l.category.replace(/s$/, ''), localized_name: l.category },
          },
        };
      }
      return notFound(req.path);
    }),
    options,
  )) as TripadvisorFake;

  server.baseUrl = `${server.url}/api/v1`;
  server.key = key;
  server.addLocation = (location) => {
    locations.push(location);
  };
  server.searches = () =>
    server.requests
      .filter((r) => r.path === '/api/v1/location/search')
      .map((r) => ({
        searchQuery: r.query.get('searchQuery') ?? '',
        category: r.query.get('category') ?? '',
        language: r.query.get('language') ?? '',
      }));
  server.details = () =>
    server.requests.filter((r) => r.path.endsWith('/details')).map((r) => r.path.split('/')[4] ?? '');
  return server;
}
