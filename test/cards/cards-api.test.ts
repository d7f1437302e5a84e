import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CardFakes, startCardFakes } from '../fakes/cards.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { buildTestApp, type TestApp, UNTHROTTLED, providerStatusRow, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { loadFixtures } from './fixtures.js';

const TIMEOUT_MS = 800;
const ART = 'https://artworks.thetvdb.com/banners';

let db: TestDatabase;
let fakes: CardFakes;
let web: WebFakes;
let t: TestApp;
let apiKey: string;
let userId: number;

type Body = Record<string, unknown> & {
  wikipedia: Record<string, unknown> | null;
  thetvdb: Record<string, unknown> | null;
  tripadvisor: Record<string, unknown> | null;
  stackexchange: (Record<string, unknown> & { answer: Record<string, unknown> | null }) | null;
  map: (Record<string, unknown> & { place: Record<string, unknown> }) | null;
};

async function get(path: string, app: TestApp = t, method: 'GET' | 'HEAD' = 'GET') {
  const res = await app.app.inject({ method, url: path, headers: { authorization: `Api-Key ${apiKey}` } });
  return { status: res.statusCode, body: (method === 'HEAD' ? {} : res.json()) as Body };
}
/** The slugs of the four web engines and Wikipedia, in the order `unresponsive` lists them. */
const WEB_ENGINES_AND_WIKIPEDIA = ['provider_01', 'provider_02', 'provider_03', 'provider_04', 'provider_08'];

/** Wikipedia answering 500 and every web engine dropping the connection, until the next test. */
function failWikipediaAndWebEngines() {
  fakes.wikipedia.setMode({ kind: 'status', status: 500, body: { error: 'boom' } });
  for (const engine of [web.brave, web.mojeek, web.marginalia, web.staan]) engine.setMode({ kind: 'reset' });
}

const cards = (params: Record<string, string>, app?: TestApp) =>
  get(`/api/v1/cards/?${new URLSearchParams(params)}`, app);

const usage = (app: TestApp = t) => searchesCounted(app, db, userId);

const healthRow = (provider: string) => providerStatusRow(t, db, provider);

beforeAll(async () => {
  db = await createTestDatabase();
  [fakes, web] = await Promise.all([startCardFakes(), startWebFakes()]);
  loadFixtures(fakes);
  t = await buildTestApp(db, { ...fakes.env, ...web.env, ...UNTHROTTLED, PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'cardreader'));
});

afterEach(() => {
  fakes.reset();
  fakes.wikipedia.setApiError(false);
  fakes.stackexchange.setThrottled(false);
  web.resetRequests();
  for (const engine of [web.brave, web.mojeek, web.marginalia, web.staan]) engine.setMode({ kind: 'normal' });
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await web?.close();
  await db?.drop();
});

describe('GET /api/v1/cards/ parameters', () => {
  it('asks for an API key first', async () => {
    const res = await t.app.inject({ url: '/api/v1/cards/' });
    expect(res.statusCode).toBe(401);
  });

  it('validates q and engine as web search does, all fields at once, counting nothing', async () => {
    const before = await usage();
    expect(await cards({})).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
    expect(await cards({ q: 'x', engine: 'bing' })).toEqual({
      status: 400,
      body: {
        engine: 'Unknown engine(s): bing. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").',
      },
    });
    const both = await cards({ q: '  ', engine: 'nope', lang: 'fr', safe: 'maybe' });
    expect(both.status).toBe(400);
    expect(Object.keys(both.body)).toEqual(['q', 'engine']);
    expect((await cards({ q: 'a'.repeat(2001) })).status).toBe(400);
    expect(fakes.wikipedia.requests).toHaveLength(0);
    expect(await usage()).toBe(before);
  });

  it('answers without the trailing slash and to HEAD, counting one search per request', async () => {
    const before = await usage();
    const plain = await get('/api/v1/cards?q=jupiter');
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.body)).toEqual([
      'query',
      'wikipedia',
      'thetvdb',
      'tripadvisor',
      'stackexchange',
      'map',
      'unresponsive',
    ]);
    expect((await get('/api/v1/cards/?q=jupiter', t, 'HEAD')).status).toBe(200);
    expect(await usage()).toBe(before + 2);
  });

  it('never answers 500 to odd query strings', async () => {
    for (const qs of [
      'q=a&q=b',
      'q[]=x',
      'q=%FF',
      'q=x&lang=%3Cscript%3E',
      'q=x&lang=../../x',
      'q=%00',
      'q=x&engine=%2C',
    ]) {
      const res = await get(`/api/v1/cards/?${qs}`);
      expect(res.status, qs).toBeLessThan(500);
    }
  });
});

describe('the Wikipedia card', () => {
  it('is the summary of the closest article', async () => {
    const res = await cards({ q: 'jupiter' });
    expect(res).toEqual({
      status: 200,
      body: {
        query: 'jupiter',
        wikipedia: {
          title: 'Jupiter',
          description: 'Fifth planet from the Sun',
          extract: 'Jupiter is the fifth planet from the Sun and the largest in the Solar System.',
          url: 'https://en.wikipedia.org/wiki/Jupiter',
          thumbnail: 'https://upload.wikimedia.org/Jupiter.jpg',
          wikibase_item: 'Q319',
        },
        thetvdb: null,
        tripadvisor: null,
        stackexchange: null,
        map: null,
        unresponsive: [],
      },
    });
  });

  it('uses the thumbnail when the original image is huge', async () => {
    const res = await cards({ q: 'saturn' });
    expect(res.body.wikipedia?.thumbnail).toBe('https://upload.wikimedia.org/thumb/320px-Saturn.jpg');
    expect(res.body.wikipedia?.wikibase_item).toBe('');
  });

  it('searches the wiki of the lang parameter', async () => {
    const res = await cards({ q: 'jupiter', lang: 'FR' });
    expect(res.body.wikipedia).toMatchObject({
      title: 'Jupiter (planète)',
      url: 'https://fr.wikipedia.org/wiki/Jupiter_(plan%C3%A8te)',
    });
    expect(fakes.wikipedia.searches()).toEqual([{ lang: 'fr', q: 'jupiter' }]);
  });

  it('sends the MediaWiki search the reference describes', async () => {
    await cards({ q: 'jupiter orbit' });
    const [req] = fakes.wikipedia.requests;
    expect(Object.fromEntries(req!.query)).toEqual({
      action: 'query',
      list: 'search',
      srsearch: 'jupiter orbit',
      srlimit: '5',
      srprop: 'redirecttitle',
      format: 'json',
    });
  });

  it('follows the summary redirect', async () => {
    const res = await cards({ q: 'big apple' });
    expect(res.body.wikipedia).toMatchObject({ title: 'New York City', wikibase_item: 'Q60' });
    expect(fakes.wikipedia.summaries().map((s) => s.title)).toEqual(['Big_Apple', 'New_York_City']);
  });

  it('is null for a page that is not a standard article', async () => {
    expect((await cards({ q: 'mercury' })).body.wikipedia).toBeNull();
  });

  it('is null when the closest hit is a near miss (no summary is fetched)', async () => {
    const res = await cards({ q: 'Deception' });
    expect(res.body.wikipedia).toBeNull();
    expect(fakes.wikipedia.summaries()).toEqual([]);
  });

  it('is hidden by safe search for an explicit title or an adult subject, shown with safe=off', async () => {
    expect((await cards({ q: 'pornography' })).body.wikipedia).toBeNull();
    expect((await cards({ q: 'pornography', safe: 'off' })).body.wikipedia).toMatchObject({ title: 'Pornography' });
    expect((await cards({ q: 'reverse cowgirl' })).body.wikipedia).toBeNull();
    expect(fakes.wikidata.claimRequests()).toContain('Q777');
    expect((await cards({ q: 'reverse cowgirl', safe: 'no' })).body.wikipedia).toMatchObject({
      title: 'Reverse cowgirl',
    });
  });
});

describe('the TheTVDB card', () => {
  it('is built from the series record, with the reference fields', async () => {
    const res = await cards({ q: 'breaking bad' });
    expect(res.body.wikipedia).toMatchObject({ title: 'Breaking Bad' });
    expect(res.body.thetvdb).toEqual({
      title: 'Breaking Bad',
      year: '2008',
      media_type: 'series',
      overview: 'Walter White, a high school chemistry teacher, turns to crime.',
      poster: `${ART}/posters/81189-10.jpg`,
      backdrop: `${ART}/fanart/original/81189-1.jpg`,
      genres: ['Drama', 'Crime', 'Thriller'],
      tagline: '',
      status: 'Ended',
      cast: [
        { name: 'Bryan Cranston', character: 'Walter White', profile: `${ART}/person/1.jpg` },
        { name: 'Aaron Paul', character: 'Jesse Pinkman', profile: `${ART}/person/2.jpg` },
        { name: 'Anna Gunn', character: 'Skyler White', profile: `${ART}/character/3.jpg` },
        { name: 'Dean Norris', character: 'Hank Schrader', profile: `${ART}/person/4.jpg` },
        { name: 'Betsy Brandt', character: 'Marie Schrader', profile: `${ART}/person/5.jpg` },
        { name: 'RJ Mitte', character: 'Walter White Jr.', profile: `${ART}/person/6.jpg` },
        { name: 'Bob Odenkirk', character: 'Saul Goodman', profile: `${ART}/person/7.jpg` },
        { name: 'Giancarlo Esposito', character: 'Gus Fring', profile: `${ART}/person/8.jpg` },
      ],
      crew: [
        { name: 'Vince Gilligan', job: 'Creator', profile: `${ART}/person/vg.jpg` },
        { name: 'Michelle MacLaren', job: 'Director', profile: '' },
        { name: 'Peter Gould', job: 'Writer', profile: `${ART}/person/pg.jpg` },
        { name: 'Moira Walley-Beckett', job: 'Writer', profile: '' },
      ],
      url: 'https://thetvdb.com/series/breaking-bad',
    });
    expect(res.body.tripadvisor).toBeNull();
    expect(res.body.stackexchange).toBeNull();
    expect(res.body.map).toBeNull();
    // search by the Wikipedia title (after a login, unless a token is kept), then the extended record
    const calls = fakes.thetvdb.requests.filter((r) => r.path !== '/v4/login');
    expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v4/search', 'GET /v4/series/81189/extended']);
    expect(Object.fromEntries(calls[0]!.query)).toEqual({ query: 'Breaking Bad', limit: '20' });
    expect(Object.fromEntries(calls[1]!.query)).toEqual({ meta: 'translations' });
    expect(calls[0]!.headers.authorization).toMatch(/^Bearer eyJ\.fake-token-\d+$/);
  });

  it('is a movie card with its tagline, searched without the disambiguator', async () => {
    const res = await cards({ q: 'heat 1995' });
    expect(res.body.thetvdb).toMatchObject({
      title: 'Heat',
      year: '1995',
      media_type: 'movie',
      overview: 'A group of thieves…',
      tagline: 'A Los Angeles crime saga',
      backdrop: `${ART}/movies/1002/backgrounds/1.jpg`,
      crew: [{ name: 'Michael Mann', job: 'Director', profile: `${ART}/person/mm.jpg` }],
      cast: [],
      url: 'https://thetvdb.com/movies/heat-1995',
    });
    expect(fakes.thetvdb.searches()).toEqual(['Heat']);
  });

  it('keeps its token and logs in again once when the token is refused', async () => {
    await cards({ q: 'breaking bad' });
    fakes.reset();
    fakes.thetvdb.expireTokens();
    const res = await cards({ q: 'better call saul' });
    expect(res.body.thetvdb).toMatchObject({
      title: 'Better Call Saul',
      year: '2015',
      url: 'https://thetvdb.com/series/better-call-saul',
    });
    expect(fakes.thetvdb.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v4/search',
      'POST /v4/login',
      'GET /v4/search',
      'GET /v4/series/273181/extended',
    ]);
    expect(JSON.parse(fakes.thetvdb.requests[1]!.body)).toEqual({ apikey: fakes.thetvdb.key });
    expect(fakes.thetvdb.requests[0]!.headers.authorization).not.toBe(fakes.thetvdb.requests[2]!.headers.authorization);
    expect(await healthRow('provider_10')).toMatchObject({ ok: true });
    // the new token is kept
    fakes.reset();
    expect((await cards({ q: 'mad men' })).body.thetvdb).toMatchObject({ title: 'Mad Men' });
    expect(fakes.thetvdb.logins()).toBe(0);
  });

  it('gives no card when the only hit is a near miss', async () => {
    const res = await cards({ q: 'deception 2008' });
    expect(res.body.wikipedia).toMatchObject({ title: 'Deception (2008 film)' });
    expect(fakes.thetvdb.searches()).toEqual(['Deception']);
    expect(res.body.thetvdb).toBeNull();
    expect(fakes.thetvdb.requests.some((r) => r.path.endsWith('/extended'))).toBe(false);
  });

  it('probes a title-like query but needs a close match', async () => {
    const res = await cards({ q: 'silent harbour tales of the deep north' });
    expect(fakes.thetvdb.searches()).toEqual(['silent harbour tales of the deep north']);
    expect(res.body.thetvdb).toBeNull();
  });

  it('comes before Stack Exchange (whose card is then null)', async () => {
    const res = await cards({ q: 'python hunters' });
    expect(res.body.thetvdb).toMatchObject({ title: 'Python Hunters' });
    expect(res.body.stackexchange).toBeNull();
    expect(res.body.map).toBeNull();
  });
});

describe('the Tripadvisor card', () => {
  it('is built from the location details, and excludes the map', async () => {
    const res = await cards({ q: 'Eiffel Tower' });
    expect(res.body.tripadvisor).toEqual({
      name: 'Eiffel Tower',
      geo: 'Paris',
      address: 'Avenue Anatole France 5, 75007 Paris, France',
      rating: 4.5,
      rating_bubbles: ['full', 'full', 'full', 'full', 'half'],
      num_reviews: 140512,
      description: 'Completed in 1889, this colossal landmark was initially criticized.',
      url: 'https://www.tripadvisor.com/Attraction_Review-g1-d188151-Reviews-Eiffel_Tower.html?m=66827',
      latitude: 48.85837,
      longitude: 2.294481,
    });
    expect(res.body.wikipedia).toMatchObject({ title: 'Eiffel Tower' });
    expect(res.body.thetvdb).toBeNull();
    expect(res.body.map).toBeNull();
    expect(fakes.nominatim.requests).toHaveLength(0);
    expect(fakes.thetvdb.requests).toHaveLength(0);
    const [search] = fakes.tripadvisor.requests;
    expect(Object.fromEntries(search!.query)).toEqual({
      key: fakes.tripadvisor.key,
      searchQuery: 'Eiffel Tower',
      language: 'en',
    });
    expect(fakes.tripadvisor.details()).toEqual(['188151']);
  });

  it('searches the category the query names and matches the town', async () => {
    const res = await cards({ q: 'best pizzeria in lyon', lang: 'fr' });
    expect(fakes.tripadvisor.searches()).toEqual([
      { searchQuery: 'best pizzeria in lyon', category: 'restaurants', language: 'fr' },
    ]);
    expect(res.body.tripadvisor).toMatchObject({
      name: 'Pizzeria Napoli',
      geo: 'Lyon',
      rating: 3.5,
      rating_bubbles: ['full', 'full', 'full', 'half', 'empty'],
      num_reviews: 87,
      latitude: null,
      longitude: null,
    });
  });
});

describe('the Stack Exchange card', () => {
  it('is the closest question with its top answer, sanitised', async () => {
    const res = await cards({ q: 'python list comprehension' });
    expect(res.body.stackexchange).toEqual({
      title: 'Python "list comprehension"',
      url: 'https://stackoverflow.com/questions/222/q',
      site_name: 'Stack Overflow',
      score: 57,
      answer_count: 2,
      view_count: 10432,
      is_answered: true,
      tags: ['python', 'list', 'list-comprehension', 'syntax', 'python-3.x'],
      answer: {
        body:
          '<p>Use <code>[x for x in y if x]</code>.</p><a>bad</a> ' +
          '<a href="https://docs.python.org/3/" target="_blank" rel="noopener noreferrer nofollow">docs</a>' +
          '<pre><code>a = [i * 2 for i in b]</code></pre>',
        is_long: false,
        score: 340,
        is_accepted: true,
        url: 'https://stackoverflow.com/questions/222/q',
      },
    });
    expect(res.body.wikipedia).toMatchObject({ title: 'List comprehension' });
    const [search] = fakes.stackexchange.searches();
    expect(search).toEqual({ site: 'stackoverflow', q: 'python list comprehension', key: null });
    const answers = fakes.stackexchange.requests.find((r) => r.path.endsWith('/answers'))!;
    expect(answers.path).toBe('/2.3/questions/222/answers');
    expect(Object.fromEntries(answers.query)).toEqual({
      site: 'stackoverflow',
      filter: 'withbody',
      sort: 'votes',
      order: 'desc',
      pagesize: '1',
    });
  });

  it('marks a long answer', async () => {
    const res = await cards({ q: 'docker volume permissions' });
    expect(res.body.stackexchange?.answer).toMatchObject({ is_long: true, is_accepted: false, score: 8 });
  });

  it('asks the network site the web results come from', async () => {
    web.brave.setResults('bash prompt colors', [{ url: 'https://superuser.com/questions/444/bash-prompt-colors' }]);
    const res = await cards({ q: 'bash prompt colors', engine: 'provider_01' });
    expect(fakes.stackexchange.searches().map((s) => s.site)).toEqual(['superuser']);
    expect(res.body.stackexchange).toMatchObject({
      title: 'Bash prompt colors',
      site_name: 'Super User',
      answer: null,
    });
    expect(web.brave.requestsTo('web')).toHaveLength(1);
  });
});

describe('the map quick answer', () => {
  it('is the first Nominatim place for a place no other card claims', async () => {
    const res = await cards({ q: 'Berlin' });
    expect(res.body.map).toEqual({
      type: 'map',
      query: 'Berlin',
      place: expect.objectContaining({
        name: 'Berlin',
        display_name: 'Berlin, Deutschland',
        lat: 52.510885,
        lon: 13.398937,
        geo_uri: 'geo:52.510885,13.398937?q=52.510885,13.398937(Berlin)',
      }),
    });
    expect(res.body.tripadvisor).toBeNull();
    expect(Object.fromEntries(fakes.nominatim.requests[0]!.query)).toMatchObject({ q: 'Berlin', limit: '1' });
    expect(fakes.tripadvisor.requests).toHaveLength(0);
  });

  it('is not looked up for what is not a place', async () => {
    const res = await cards({ q: 'jupiter' });
    expect(res.body.map).toBeNull();
    expect(fakes.nominatim.requests).toHaveLength(0);
  });
});

describe('timeouts and failures', () => {
  it('a hanging TheTVDB loses only its own card, within its timeout', async () => {
    fakes.thetvdb.setMode({ kind: 'hang' });
    // TheTVDB never answers: only its timeout can end the request.
    const res = await cards({ q: 'the wire' });
    expect(res.status).toBe(200);
    expect(res.body.wikipedia).toMatchObject({ title: 'The Wire' });
    expect(res.body.thetvdb).toBeNull();
    expect(await healthRow('provider_10')).toMatchObject({ ok: false });
  });

  it('a failing Wikipedia leaves the other cards, and is listed in unresponsive', async () => {
    fakes.wikipedia.setMode({ kind: 'status', status: 503, body: { error: 'overloaded' } });
    const res = await cards({ q: 'kubernetes ingress timeout' });
    expect(res.status).toBe(200);
    expect(res.body.wikipedia).toBeNull();
    expect(res.body.stackexchange).toMatchObject({ title: 'Kubernetes ingress timeout' });
    expect(res.body.unresponsive).toEqual([{ engine: 'provider_08', reason: 'error' }]);
    expect(await healthRow('provider_08')).toMatchObject({ ok: false, last_error: expect.stringContaining('503') });
  });

  it('lists every failed provider in unresponsive, in slug order, with the cards null', async () => {
    fakes.wikipedia.setMode({ kind: 'status', status: 500, body: { error: 'boom' } });
    fakes.stackexchange.setMode({ kind: 'reset' });
    web.brave.setMode({ kind: 'status', status: 500, body: { error: 'boom' } });
    const res = await cards({ q: 'kubernetes ingress timeout listed' });
    expect(res.status).toBe(200);
    expect(res.body.wikipedia).toBeNull();
    expect(res.body.stackexchange).toBeNull();
    expect(res.body.unresponsive).toEqual([
      { engine: 'provider_01', reason: 'error' },
      { engine: 'provider_08', reason: 'error' },
      { engine: 'provider_12', reason: 'unavailable' },
    ]);
  });

  it('answers 502 as the other endpoints do when every provider asked failed', async () => {
    for (const f of [...fakes.all, web.brave, web.mojeek, web.marginalia, web.staan]) f.setMode({ kind: 'reset' });
    const res = await cards({ q: 'jupiter everything down' });
    expect(res.status).toBe(502);
    expect(res.body.detail).toBe('All search providers failed.');
    const unresponsive = res.body.unresponsive as { engine: string; reason: string }[];
    expect(unresponsive.slice(0, 5)).toEqual(
      WEB_ENGINES_AND_WIKIPEDIA.map((engine) => ({
        engine,
        reason: 'unavailable',
      })),
    );
    expect(unresponsive.every((u) => u.reason === 'unavailable')).toBe(true);
  });

  it('answers 200 when one provider answered, even with no card (TheTVDB found nothing)', async () => {
    failWikipediaAndWebEngines();
    const res = await cards({ q: 'jupiter nothing found' });
    expect(res.status).toBe(200);
    expect(res.body.thetvdb).toBeNull();
    expect(fakes.thetvdb.requests.length).toBeGreaterThan(0);
    expect((res.body.unresponsive as { engine: string }[]).map((u) => u.engine)).toEqual(WEB_ENGINES_AND_WIKIPEDIA);
  });

  it('answers 200 with the map when every other provider failed but the map was found', async () => {
    const known = fakes.nominatim.places;
    fakes.nominatim.places = [
      ...known,
      { ...known[0]!, name: '12 Main Street', display_name: '12 Main Street, Springfield' },
    ];
    try {
      failWikipediaAndWebEngines();
      const res = await cards({ q: '12 Main Street' });
      expect(res.status).toBe(200);
      expect(res.body.map).toMatchObject({ type: 'map', place: { name: '12 Main Street' } });
      expect((res.body.unresponsive as { engine: string }[]).map((u) => u.engine)).toEqual(WEB_ENGINES_AND_WIKIPEDIA);
    } finally {
      fakes.nominatim.places = known;
    }
  });

  it('a hanging Wikipedia delays the answer only by its own timeout', async () => {
    fakes.wikipedia.setMode({ kind: 'hang' });
    // Wikipedia never answers: only its timeout can end the request.
    const res = await cards({ q: 'kubernetes ingress timeout hanging' });
    expect(res.body.wikipedia).toBeNull();
    expect(res.body.stackexchange).toMatchObject({ title: 'Kubernetes ingress timeout' });
    // asked at once, without waiting for Wikipedia
    expect(fakes.stackexchange.searches()).toHaveLength(1);
  });

  it('an Action API error in a 200 is a Wikipedia failure', async () => {
    fakes.wikipedia.setApiError(true);
    const res = await cards({ q: 'jupiter api error' });
    expect(res.body.wikipedia).toBeNull();
    expect(await healthRow('provider_08')).toMatchObject({ ok: false });
  });

  it('without Wikidata the description still says what the subject is', async () => {
    fakes.wikidata.setMode({ kind: 'reset' });
    const res = await cards({ q: 'the sopranos' });
    expect(res.body.wikipedia).toMatchObject({ title: 'The Sopranos' });
    expect(res.body.thetvdb).toMatchObject({ title: 'The Sopranos' });
    expect(await healthRow('provider_09')).toMatchObject({ ok: false });
  });

  it('a throttled Stack Exchange gives no card and is recorded down', async () => {
    fakes.stackexchange.setThrottled(true);
    const res = await cards({ q: 'kubernetes ingress timeout again' });
    expect(res.status).toBe(200);
    expect(res.body.stackexchange).toBeNull();
    expect(await healthRow('provider_12')).toMatchObject({ ok: false, last_error: expect.stringContaining('400') });
  });

  it('records the card providers up on success', async () => {
    const res = await cards({ q: 'louvre' });
    expect(res.body.tripadvisor).toMatchObject({ name: 'Louvre Museum' });
    expect(await healthRow('provider_08')).toMatchObject({ ok: true });
    expect(await healthRow('provider_09')).toMatchObject({ ok: true });
    expect(await healthRow('provider_11')).toMatchObject({ ok: true });
  });
});

describe('caching', () => {
  it('reuses a card for an hour: no upstream call the second time', async () => {
    await cards({ q: 'breaking bad' });
    fakes.reset();
    const again = await cards({ q: 'breaking bad' });
    expect(again.body.thetvdb).toMatchObject({ title: 'Breaking Bad' });
    expect(fakes.wikipedia.requests).toHaveLength(0);
    expect(fakes.wikidata.requests).toHaveLength(0);
    expect(fakes.thetvdb.requests).toHaveLength(0);
  });

  it('caches "no card" too', async () => {
    const first = await cards({ q: 'zzyzx quorble' });
    expect(first.body.wikipedia).toBeNull();
    expect(first.body.thetvdb).toBeNull();
    expect(fakes.wikipedia.searches()).toHaveLength(1);
    expect(fakes.thetvdb.searches()).toHaveLength(1);
    await cards({ q: 'zzyzx quorble' });
    expect(fakes.wikipedia.searches()).toHaveLength(1);
    expect(fakes.thetvdb.searches()).toHaveLength(1);
  });

  it('keeps cards apart per language', async () => {
    const q = 'saturn rings';
    await cards({ q, lang: 'en' });
    await cards({ q, lang: 'fr' });
    await cards({ q, lang: 'fr' });
    expect(fakes.wikipedia.searches()).toEqual([
      { lang: 'en', q },
      { lang: 'fr', q },
    ]);
  });

  it('never caches a failure', async () => {
    fakes.stackexchange.setThrottled(true);
    await cards({ q: 'regex lookbehind support' });
    fakes.stackexchange.setThrottled(false);
    await cards({ q: 'regex lookbehind support' });
    expect(fakes.stackexchange.searches()).toHaveLength(2);
  });
});

describe('providers not configured', () => {
  it('are never asked and give no card', async () => {
    const bare = await buildTestApp(db, {
      ...fakes.env,
      THETVDB_API_KEY: '',
      TRIPADVISOR_API_KEY: '',
      DISABLED_PROVIDERS: 'provider_12',
      ...UNTHROTTLED,
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    try {
      for (const q of ['breaking bad', 'Eiffel Tower', 'python list comprehension']) {
        const res = await cards({ q }, bare);
        expect(res.status).toBe(200);
        expect(res.body.thetvdb).toBeNull();
        expect(res.body.tripadvisor).toBeNull();
        expect(res.body.stackexchange).toBeNull();
      }
      expect(fakes.thetvdb.requests).toHaveLength(0);
      expect(fakes.tripadvisor.requests).toHaveLength(0);
      expect(fakes.stackexchange.requests).toHaveLength(0);
    } finally {
      await bare.close();
    }
  });
});
