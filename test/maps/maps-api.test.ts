import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type NominatimFake, type NominatimPlace, PLACES, startNominatimFake } from '../fakes/nominatim.js';
import { buildTestApp, type TestApp, UNTHROTTLED, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const TIMEOUT_MS = 500;
const OSM = 'https://www.openstreetmap.org';

/** The fake's Berlin, with its real bounding box. */
const BERLIN: NominatimPlace = {
  ...PLACES.find((p) => p.name === 'Berlin')!,
  boundingbox: ['52.3382448', '52.6755087', '13.0883450', '13.7611609'],
};
const EIFFEL: NominatimPlace = {
  name: 'Tour Eiffel',
  display_name: 'Tour Eiffel, 5, Avenue Anatole France, Paris, France',
  lat: '48.8582599',
  lon: '2.2945006',
  category: 'man_made',
  type: 'tower',
  addresstype: 'man_made',
  importance: 0.6,
  boundingbox: ['48.8582599', '48.8582599', '2.2945006', '2.2945006'],
};
const GATE: NominatimPlace = {
  name: '',
  display_name: 'Pariser Platz 1, Mitte, Berlin, Deutschland',
  lat: '52.5162746',
  lon: '13.3777041',
  category: 'building',
  type: 'yes',
  addresstype: 'building',
  importance: 0.1,
  boundingbox: null,
};

const EIFFEL_PLACE = {
  name: 'Tour Eiffel',
  display_name: 'Tour Eiffel, 5, Avenue Anatole France, Paris, France',
  lat: 48.85826,
  lon: 2.294501,
  category: 'man_made',
  type: 'tower',
  addresstype: 'man_made',
  importance: 0.6,
  embed_url: `${OSM}/export/embed.html?bbox=2.291501%2C48.85526%2C2.297501%2C48.86126&layer=mapnik&marker=48.85826%2C2.294501`,
  mini_embed_url: `${OSM}/export/embed.html?bbox=2.286501%2C48.85026%2C2.302501%2C48.86626&layer=mapnik&marker=48.85826%2C2.294501`,
  osm_url: `${OSM}/?mlat=48.85826&mlon=2.294501#map=16/48.85826/2.294501`,
  directions_url: `${OSM}/directions?to=48.85826%2C2.294501`,
  geo_uri: 'geo:48.85826,2.294501?q=48.85826,2.294501(Tour%20Eiffel)',
};

let db: TestDatabase;
let fake: NominatimFake;
let t: TestApp;
let apiKey: string;
let userId: number;

async function get(path: string, app: TestApp = t) {
  const res = await app.app.inject({ method: 'GET', url: path, headers: { authorization: `Api-Key ${apiKey}` } });
  return { status: res.statusCode, headers: res.headers, body: res.json() as Record<string, unknown> };
}
const maps = (params: Record<string, string>, app?: TestApp) =>
  get(`/api/v1/maps/?${new URLSearchParams(params)}`, app);

const usage = (app: TestApp = t) => searchesCounted(app, db, userId);

async function healthRow() {
  await t.app.health.recorder.flush();
  const { rows } = await db.pool.query('SELECT ok, last_error, source FROM provider_status WHERE provider = $1', [
    'provider_13',
  ]);
  return rows[0] as { ok: boolean; last_error: string; source: string } | undefined;
}

const searches = () => fake.requests.filter((r) => r.path === '/search');
const reverses = () => fake.requests.filter((r) => r.path === '/reverse');

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startNominatimFake();
  t = await buildTestApp(db, { ...UNTHROTTLED, NOMINATIM_BASE_URL: fake.url, PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'mapper'));
});

afterEach(() => {
  fake.setMode({ kind: 'normal' });
  fake.places = [BERLIN, EIFFEL, GATE];
  fake.requests.length = 0;
  t.app.searchCache.clear();
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
  await db?.drop();
});

describe('GET /api/v1/maps/ geocoding', () => {
  it('asks Nominatim search and answers {query, places} in the reference place shape', async () => {
    fake.places = [BERLIN, EIFFEL, GATE];
    const res = await maps({ q: '  berlin ' });
    expect(res.status).toBe(200);
    const berlinBox = `${OSM}/export/embed.html?bbox=13.088345%2C52.3382448%2C13.7611609%2C52.6755087&layer=mapnik&marker=52.510885%2C13.398937`;
    expect(res.body).toEqual({
      query: 'berlin',
      places: [
        {
          name: 'Berlin',
          display_name: 'Berlin, Deutschland',
          lat: 52.510885,
          lon: 13.398937,
          category: 'boundary',
          type: 'administrative',
          addresstype: 'city',
          importance: 0.85,
          embed_url: berlinBox,
          mini_embed_url: berlinBox,
          osm_url: `${OSM}/?mlat=52.510885&mlon=13.398937#map=16/52.510885/13.398937`,
          directions_url: `${OSM}/directions?to=52.510885%2C13.398937`,
          geo_uri: 'geo:52.510885,13.398937?q=52.510885,13.398937(Berlin)',
        },
        {
          name: 'Pariser Platz 1',
          display_name: 'Pariser Platz 1, Mitte, Berlin, Deutschland',
          lat: 52.516275,
          lon: 13.377704,
          category: 'building',
          type: 'yes',
          addresstype: 'building',
          importance: 0.1,
          embed_url: `${OSM}/export/embed.html?bbox=13.374704%2C52.513275%2C13.380704%2C52.519275&layer=mapnik&marker=52.516275%2C13.377704`,
          mini_embed_url: `${OSM}/export/embed.html?bbox=13.369704%2C52.508275%2C13.385704%2C52.524275&layer=mapnik&marker=52.516275%2C13.377704`,
          osm_url: `${OSM}/?mlat=52.516275&mlon=13.377704#map=16/52.516275/13.377704`,
          directions_url: `${OSM}/directions?to=52.516275%2C13.377704`,
          geo_uri: 'geo:52.516275,13.377704?q=52.516275,13.377704(Pariser%20Platz%201)',
        },
      ],
    });
    const [req] = searches();
    expect(Object.fromEntries(req!.query)).toEqual({ q: 'berlin', format: 'jsonv2', limit: '10' });
    expect(req!.headers['user-agent']).toBe(t.config.SIFT_USER_AGENT);
    expect(t.config.SIFT_USER_AGENT).toMatch(/^Sift\/\S+ \(.+\)$/);
  });

  it('uses the squares around the point for a degenerate bounding box', async () => {
    const res = await maps({ q: 'eiffel' });
    expect(res.body).toEqual({ query: 'eiffel', places: [EIFFEL_PLACE] });
  });

  it('sends lang as accept-language and the limit, clamped into 1..50', async () => {
    await maps({ q: 'berlin', lang: 'DE', limit: '3' });
    await maps({ q: 'berlin', limit: '999' });
    await maps({ q: 'berlin', limit: '-4' });
    await maps({ q: 'berlin', limit: ' 0 ' });
    expect(searches().map((r) => Object.fromEntries(r.query))).toEqual([
      { q: 'berlin', format: 'jsonv2', limit: '3', 'accept-language': 'de' },
      { q: 'berlin', format: 'jsonv2', limit: '50' },
      { q: 'berlin', format: 'jsonv2', limit: '1' },
    ]);
  });

  it('returns at most limit places, and [] when nothing matched', async () => {
    const one = await maps({ q: 'berlin', limit: '1' });
    expect((one.body.places as unknown[]).length).toBe(1);
    expect(await maps({ q: 'atlantis' })).toMatchObject({ status: 200, body: { query: 'atlantis', places: [] } });
  });

  it('caches geocoding per (query, limit, lang) for an hour', async () => {
    await maps({ q: 'berlin' });
    await maps({ q: 'berlin' });
    await maps({ q: 'berlin', limit: '10' });
    expect(searches()).toHaveLength(1);
    await maps({ q: 'berlin', limit: '2' });
    await maps({ q: 'berlin', lang: 'fr' });
    await maps({ q: 'paris' });
    expect(searches()).toHaveLength(4);
  });

  it('validates q and limit (400, all invalid fields at once, no upstream call, no usage)', async () => {
    const before = await usage();
    expect(await maps({})).toMatchObject({ status: 400, body: { q: 'This query parameter is required.' } });
    expect(await maps({ q: '   ' })).toMatchObject({ status: 400, body: { q: 'This query parameter is required.' } });
    expect(await maps({ q: 'x', limit: '2.5' })).toMatchObject({ status: 400, body: { limit: 'Must be an integer.' } });
    expect(await maps({ q: 'x', limit: '' })).toMatchObject({ status: 400, body: { limit: 'Must be an integer.' } });
    expect((await maps({ limit: 'ten' })).body).toEqual({
      q: 'This query parameter is required.',
      limit: 'Must be an integer.',
    });
    expect(await maps({ q: 'a'.repeat(2001) })).toMatchObject({
      status: 400,
      body: { q: 'Ensure this value has at most 2000 characters.' },
    });
    // Only one of lat/lon: geocode mode.
    expect((await maps({ lat: '48.85' })).body).toEqual({ q: 'This query parameter is required.' });
    expect((await maps({ lat: '48.85', lon: ' ' })).body).toEqual({ q: 'This query parameter is required.' });
    expect(fake.requests).toHaveLength(0);
    expect(await usage()).toBe(before);
  });

  it('answers 502 when Nominatim fails, records it down, and recovers', async () => {
    for (const mode of [
      { kind: 'status', status: 500 } as const,
      { kind: 'status', status: 403, body: { error: 'blocked' } } as const,
      { kind: 'garbage' } as const,
      { kind: 'reset' } as const,
      { kind: 'hang' } as const,
    ]) {
      fake.setMode(mode);
      const res = await maps({ q: 'berlin' });
      expect(res.status, mode.kind).toBe(502);
      expect(res.body).toEqual({
        detail: 'All search providers failed.',
        unresponsive: [{ engine: 'provider_13', reason: mode.kind === 'hang' ? 'timeout' : expect.any(String) }],
      });
    }
    expect(await healthRow()).toMatchObject({ ok: false, source: 'query' });
    fake.setMode({ kind: 'normal' });
    const ok = await maps({ q: 'berlin' });
    expect(ok.status).toBe(200);
    expect(await healthRow()).toMatchObject({ ok: true, source: 'query' });
  });

  it('never answers 500 to odd query strings', async () => {
    for (const qs of [
      'q=a&q=berlin',
      'q[]=x',
      'q=%FF%FE',
      'q=x&limit=1&limit=2',
      'q=x&limit=%EF%BC%92',
      'q=%00',
      'q=x&lang=%3Cscript%3E',
      'lat=%FF&lon=1',
      'lat=1&lon=2&label=%ED%A0%80',
      'lat[]=1&lon=2',
      `q=${'%F0%9F%98%80'.repeat(300)}`,
    ]) {
      const res = await get(`/api/v1/maps/?${qs}`);
      expect(res.status, qs).toBeLessThan(500);
    }
  });
});

describe('GET /api/v1/maps/ reverse geocoding', () => {
  it('looks the coordinates up with Nominatim /reverse and answers {query: "", places: [place]}', async () => {
    const res = await maps({ lat: ' 48.8584 ', lon: '2.2945' });
    expect(res).toMatchObject({ status: 200, body: { query: '', places: [EIFFEL_PLACE] } });
    expect(searches()).toHaveLength(0);
    const [req] = reverses();
    expect(Object.fromEntries(req!.query)).toEqual({ lat: '48.8584', lon: '2.2945', format: 'jsonv2' });
    expect(req!.headers['user-agent']).toBe(t.config.SIFT_USER_AGENT);
  });

  it('rounds the coordinates to 6 places, sends lang, and caches the lookup', async () => {
    await maps({ lat: '48.85840004', lon: '2.2945', lang: 'fr' });
    await maps({ lat: '48.8584', lon: '2.29450000001', lang: 'fr' });
    expect(reverses().map((r) => Object.fromEntries(r.query))).toEqual([
      { lat: '48.8584', lon: '2.2945', format: 'jsonv2', 'accept-language': 'fr' },
    ]);
  });

  it('lets coordinates win over q, and names the place by label, else q', async () => {
    const byQ = await maps({ q: 'My tower', lat: '48.8584', lon: '2.2945' });
    expect(byQ.body).toEqual({
      query: '',
      places: [{ ...EIFFEL_PLACE, name: 'My tower', geo_uri: 'geo:48.85826,2.294501?q=48.85826,2.294501(My%20tower)' }],
    });
    const byLabel = await maps({ q: 'ignored', label: 'Là-haut', lat: '48.8584', lon: '2.2945' });
    expect((byLabel.body.places as { name: string; geo_uri: string }[])[0]).toMatchObject({
      name: 'Là-haut',
      display_name: EIFFEL_PLACE.display_name,
      geo_uri: 'geo:48.85826,2.294501?q=48.85826,2.294501(L%C3%A0-haut)',
    });
    expect(searches()).toHaveLength(0);
  });

  it('builds the place from the coordinates alone when Nominatim finds nothing', async () => {
    const sea = await maps({ lat: '0', lon: '-30.5', q: 'Mid-Atlantic' });
    expect(sea).toMatchObject({ status: 200 });
    expect(sea.body).toEqual({
      query: '',
      places: [
        {
          name: 'Mid-Atlantic',
          display_name: 'Mid-Atlantic',
          lat: 0,
          lon: -30.5,
          category: '',
          type: '',
          addresstype: '',
          importance: 0,
          embed_url: `${OSM}/export/embed.html?bbox=-30.503%2C-0.003%2C-30.497%2C0.003&layer=mapnik&marker=0.0%2C-30.5`,
          mini_embed_url: `${OSM}/export/embed.html?bbox=-30.508%2C-0.008%2C-30.492%2C0.008&layer=mapnik&marker=0.0%2C-30.5`,
          osm_url: `${OSM}/?mlat=0.0&mlon=-30.5#map=16/0.0/-30.5`,
          directions_url: `${OSM}/directions?to=0.0%2C-30.5`,
          geo_uri: 'geo:0.0,-30.5?q=0.0,-30.5(Mid-Atlantic)',
        },
      ],
    });
    const unnamed = await maps({ lat: '-10', lon: '-20' });
    expect((unnamed.body.places as { name: string; display_name: string; geo_uri: string }[])[0]).toMatchObject({
      name: '',
      display_name: '',
      geo_uri: 'geo:-10.0,-20.0?q=-10.0,-20.0',
    });
  });

  it('falls back to the coordinates when Nominatim fails, still 200, and records the failure', async () => {
    for (const mode of [
      { kind: 'status', status: 404, body: { error: 'Unable to geocode' } } as const,
      { kind: 'status', status: 503 } as const,
      { kind: 'garbage' } as const,
      { kind: 'hang' } as const,
    ]) {
      fake.setMode(mode);
      const res = await maps({ lat: '48.8584', lon: '2.2945', label: 'Fallback' });
      expect(res.status, mode.kind).toBe(200);
      expect(res.body.places).toEqual([
        expect.objectContaining({ name: 'Fallback', lat: 48.8584, lon: 2.2945, category: '', importance: 0 }),
      ]);
    }
    expect(await healthRow()).toMatchObject({ ok: false });
  });

  it('validates each coordinate: finite numbers within -90..90 and -180..180', async () => {
    const MESSAGE = 'lat and lon must be valid coordinates.';
    const before = await usage();
    for (const [lat, lon, body] of [
      ['nan', '2', { lat: MESSAGE }],
      ['inf', '2', { lat: MESSAGE }],
      ['-Infinity', '2', { lat: MESSAGE }],
      ['1e999', '2', { lat: MESSAGE }],
      ['91', '2', { lat: MESSAGE }],
      ['-90.0000001', '2', { lat: MESSAGE }],
      ['abc', '2', { lat: MESSAGE }],
      ['0x10', '2', { lat: MESSAGE }],
      ['1,5', '2', { lat: MESSAGE }],
      ['48', 'NaN', { lon: MESSAGE }],
      ['48', '180.5', { lon: MESSAGE }],
      ['48', '-1e3', { lon: MESSAGE }],
      ['100', '200', { lat: MESSAGE, lon: MESSAGE }],
    ] as const) {
      const res = await maps({ lat, lon });
      expect({ lat, lon, status: res.status, body: res.body }).toEqual({ lat, lon, status: 400, body });
    }
    expect(fake.requests).toHaveLength(0);
    expect(await usage()).toBe(before);
  });

  it('accepts the edges and Python float forms', async () => {
    for (const [lat, lon] of [
      ['90', '180'],
      ['-90', '-180'],
      ['+1.5e1', '.5'],
      ['5.', '1_0.25'],
    ] as const) {
      const res = await maps({ lat, lon });
      expect(res.status, `${lat},${lon}`).toBe(200);
    }
    expect((await maps({ lat: '+1.5e1', lon: '.5' })).body.places).toEqual([
      expect.objectContaining({ lat: 15, lon: 0.5 }),
    ]);
  });

  it('ignores limit in reverse mode', async () => {
    expect((await maps({ lat: '1', lon: '2', limit: 'x' })).status).toBe(200);
  });
});

describe('maps usage and configuration', () => {
  it('counts one search per request in both modes', async () => {
    const before = await usage();
    await maps({ q: 'berlin' });
    await maps({ lat: '48.8584', lon: '2.2945' });
    await maps({ lat: '0', lon: '0' });
    await get('/api/v1/maps?q=paris');
    expect(await usage()).toBe(before + 4);
  });

  it('answers both slash forms and HEAD, and asks for a key first', async () => {
    expect((await get('/api/v1/maps?q=berlin')).status).toBe(200);
    const head = await t.app.inject({
      method: 'HEAD',
      url: '/api/v1/maps/?q=berlin',
      headers: { authorization: `Api-Key ${apiKey}` },
    });
    expect(head.statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/v1/maps/?q=berlin' })).statusCode).toBe(401);
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/v1/maps/',
      headers: { authorization: `Api-Key ${apiKey}` },
    });
    expect(post.statusCode).toBe(405);
  });

  it('with Nominatim disabled: geocoding 503 naming it, reverse from the coordinates, no call', async () => {
    const off = await buildTestApp(db, {
      ...UNTHROTTLED,
      NOMINATIM_BASE_URL: fake.url,
      DISABLED_PROVIDERS: 'provider_13',
    });
    try {
      const geo = await maps({ q: 'berlin' }, off);
      expect(geo.status).toBe(503);
      expect(String(geo.body.detail)).toMatch(/^No geocoding provider is configured on this instance: /);
      const rev = await maps({ lat: '48.8584', lon: '2.2945', q: 'Here' }, off);
      expect(rev.status).toBe(200);
      expect(rev.body.places).toEqual([expect.objectContaining({ name: 'Here', lat: 48.8584, category: '' })]);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await off.close();
    }
  });
});
