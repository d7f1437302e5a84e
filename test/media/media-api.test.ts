import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MediaFakes, startMediaFakes } from '../fakes/index.js';
import { defaultResults, slugify } from '../fakes/web-results.js';
import { worldNewsTime } from '../fakes/worldnews.js';
import { buildTestApp, type TestApp, UNTHROTTLED, providerStatusRow, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * GET /api/v1/images/, /images/similar/, /news/, /videos/ through the real
 * app, against real HTTP fakes of Brave, Pixabay, Sepia Search and World News.
 */

const TIMEOUT_MS = 700;
const ALL = ['provider_01', 'provider_02', 'provider_03', 'provider_04'];
const DAY_MS = 86_400_000;

let db: TestDatabase;
let fakes: MediaFakes;
let t: TestApp;
let apiKey: string;
let userId: number;
let counter = 0;

/** A query no other test uses (the response cache lives as long as the app). */
const uniq = (base: string) => `${base} ${++counter}`;

type Body = Record<string, unknown> & { results: Record<string, unknown>[]; unresponsive: unknown[] };

async function get(path: string, params: Record<string, string>, app: TestApp = t) {
  const res = await app.app.inject({
    method: 'GET',
    url: `/api/v1${path}?${new URLSearchParams(params)}`,
    headers: { authorization: `Api-Key ${apiKey}` },
  });
  return { status: res.statusCode, body: res.json() as Body };
}
const images = (p: Record<string, string>, app?: TestApp) => get('/images/', p, app);
const similar = (p: Record<string, string>, app?: TestApp) => get('/images/similar/', p, app);
const news = (p: Record<string, string>, app?: TestApp) => get('/news/', p, app);
const videos = (p: Record<string, string>, app?: TestApp) => get('/videos/', p, app);

const usage = (app: TestApp = t) => searchesCounted(app, db, userId);

const healthRow = (provider: string) => providerStatusRow(t, db, provider);

const query = (req: { query: URLSearchParams } | undefined) => Object.fromEntries(req!.query);

/** A raw Brave image result. */
const braveImage = (n: number) => ({
  type: 'image_result',
  title: `Brave image ${n}`,
  url: `https://photos.example/${n}`,
  source: 'photos.example',
  thumbnail: { src: `https://imgs.search.brave.com/${n}`, width: 500, height: 333 },
  properties: { url: `https://photos.example/${n}.jpg`, width: 1920, height: 1280 },
  meta_url: { scheme: 'https', netloc: 'photos.example', hostname: 'photos.example', path: `› ${n}` },
  confidence: 'high',
});
const braveImageResult = (n: number) => ({
  title: `Brave image ${n}`,
  url: `https://photos.example/${n}`,
  source: 'photos.example',
  thumbnail: `https://imgs.search.brave.com/${n}`,
});

/** A raw Pixabay hit. */
const pixabayHit = (n: number) => ({
  id: n,
  pageURL: `https://pixabay.com/photos/hit-${n}/`,
  type: 'photo',
  tags: `tag${n}, photo`,
  previewURL: `https://cdn.pixabay.com/${n}_150.jpg`,
  webformatURL: `https://pixabay.com/get/${n}_640.jpg`,
  largeImageURL: `https://pixabay.com/get/${n}_1280.jpg`,
  views: 1,
  user: 'someone',
});
const pixabayResult = (n: number) => ({
  title: `tag${n}, photo`,
  url: `https://pixabay.com/photos/hit-${n}/`,
  source: 'pixabay.com',
  thumbnail: `https://pixabay.com/get/${n}_640.jpg`,
});

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startMediaFakes();
  t = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'mediasearcher'));
});

afterEach(() => {
  fakes.reset();
  fakes.resetRequests();
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe('media endpoints: parameters', () => {
  it('ask for an API key before validating anything', async () => {
    for (const path of ['/api/v1/images/', '/api/v1/images/similar/', '/api/v1/news/', '/api/v1/videos']) {
      expect((await t.app.inject({ url: path })).statusCode, path).toBe(401);
    }
  });

  it('answer 400 with one message per invalid field, in the order q, engine, page, and call no provider', async () => {
    const engineMessage =
      'Unknown engine(s): bing. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").';
    for (const search of [images, news, videos]) {
      expect(await search({})).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
      expect(await search({ q: 'x', page: 'two' })).toEqual({ status: 400, body: { page: 'Must be an integer.' } });
      const all = await search({ page: '1.5', engine: 'bing', q: '  ' });
      expect(all.status).toBe(400);
      expect(Object.entries(all.body)).toEqual([
        ['q', 'This query parameter is required.'],
        ['engine', engineMessage],
        ['page', 'Must be an integer.'],
      ]);
    }
    expect(fakes.brave.requests.length + fakes.pixabay.requests.length).toBe(0);
    expect(fakes.sepia.requests.length + fakes.worldnews.requests.length).toBe(0);
  });

  it('never answer 500 to odd query strings', async () => {
    for (const path of ['/images/', '/images/similar/', '/news/', '/videos/']) {
      for (const qs of [
        'q[]=x',
        'q=%FF%FE',
        'q=x&page=1&page=2',
        'q=x&engine=%2C',
        'q=%00',
        'query=x&exclude_url[a]=1',
      ]) {
        const res = await t.app.inject({
          url: `/api/v1${path}?${qs}`,
          headers: { authorization: `Api-Key ${apiKey}` },
        });
        expect(res.statusCode, `${path}?${qs}`).toBeLessThan(500);
      }
    }
  });

  it('clamp the page into 1..50 and echo the parsed engine list', async () => {
    const q = uniq('clamp');
    const res = await images({ q, page: '999', engine: 'provider_03, provider_02', safe: 'off' });
    expect(res.status).toBe(200);
    expect(res.body.page).toBe(50);
    expect(res.body.engine).toEqual(['provider_02', 'provider_03']);
    expect(fakes.pixabay.requests[0]!.query.get('page')).toBe('50');
  });
});

describe('GET /api/v1/images/', () => {
  it('interleaves Brave and Pixabay in that order, every field mapped', async () => {
    const q = uniq('aurora');
    fakes.brave.setMediaResults('images', q, [braveImage(1), braveImage(2), braveImage(3)]);
    fakes.pixabay.setHits(q, [pixabayHit(1), pixabayHit(2)]);
    const res = await images({ q });
    expect(res).toEqual({
      status: 200,
      body: {
        query: q,
        tab: 'images',
        page: 1,
        engine: ALL,
        results: [braveImageResult(1), pixabayResult(1), braveImageResult(2), pixabayResult(2), braveImageResult(3)],
        unresponsive: [],
      },
    });
  });

  it('blends Pixabay whatever engine says, and asks Brave only when engine names provider_01', async () => {
    const q = uniq('pixabay only');
    const res = await images({ q, engine: 'provider_02' });
    expect(res.status).toBe(200);
    expect(res.body.engine).toEqual(['provider_02']);
    expect(res.body.results).toHaveLength(10);
    expect(res.body.results.every((r) => r.source === 'pixabay.com')).toBe(true);
    expect(fakes.brave.requests).toHaveLength(0);
    expect(fakes.pixabay.requests).toHaveLength(1);
  });

  it('maps page, safe search and language per upstream: Brave slices locally, Pixabay pages itself', async () => {
    const q = uniq('paging');
    const res = await images({ q, page: '3', safe: 'off', lang: 'DE' });
    expect(query(fakes.brave.requestsTo('images')[0])).toEqual({
      q,
      count: '30',
      safesearch: 'off',
      search_lang: 'de',
      country: 'DE',
    });
    expect(query(fakes.pixabay.requests[0])).toEqual({
      key: fakes.pixabay.key,
      q,
      page: '3',
      per_page: '10',
      image_type: 'all',
      safesearch: 'false',
      lang: 'de',
    });
    // the Brave fake derives its ranked list from the query: page 3 is results 21-30
    const brave = res.body.results.filter((r) => r.source !== 'pixabay.com').map((r) => r.title);
    expect(brave).toEqual(
      defaultResults('brave', q)
        .slice(20, 30)
        .map((r) => r.title),
    );
    const pixabay = res.body.results.filter((r) => r.source === 'pixabay.com');
    expect(pixabay[0]!.url).toBe(`https://pixabay.com/photos/${slugify(q)}-100021/`);

    await images({ q: uniq('safe default') });
    expect(fakes.brave.requestsTo('images')[1]!.query.get('safesearch')).toBe('strict');
    expect(fakes.pixabay.requests[1]!.query.get('safesearch')).toBe('true');
    expect(fakes.pixabay.requests[1]!.query.has('lang')).toBe(false);
  });

  it('asks only Pixabay past page 20, where Brave has no more images', async () => {
    const res = await images({ q: uniq('deep'), page: '21' });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(10);
    expect(fakes.brave.requests).toHaveLength(0);
  });

  it('lists a failing provider in unresponsive, keeps the other, records it down without its key', async () => {
    fakes.pixabay.failWith('rate_limited');
    const res = await images({ q: uniq('partial') });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([{ engine: 'provider_05', reason: 'rate_limited' }]);
    expect(res.body.results).toHaveLength(10);
    expect(res.body.results.every((r) => r.source !== 'pixabay.com')).toBe(true);
    const row = await healthRow('provider_05');
    expect(row?.ok).toBe(false);
    expect(row?.last_error).not.toContain(fakes.pixabay.key);
    expect((await healthRow('provider_01'))?.ok).toBe(true);
  });

  it('answers 502 when every provider asked failed, naming them, without any key', async () => {
    fakes.brave.failWith('invalid_key');
    fakes.pixabay.failWith('invalid_key');
    const res = await images({ q: uniq('all down') });
    expect(res).toEqual({
      status: 502,
      body: {
        detail: 'All search providers failed.',
        unresponsive: [
          { engine: 'provider_01', reason: 'error' },
          { engine: 'provider_05', reason: 'error' },
        ],
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(fakes.pixabay.key);
  });

  it('serves a repeated search from the cache without calling either upstream again', async () => {
    const q = uniq('cached images');
    const first = await images({ q });
    const second = await images({ q });
    expect(second).toEqual(first);
    expect(fakes.brave.requests).toHaveLength(1);
    expect(fakes.pixabay.requests).toHaveLength(1);
    await images({ q, page: '2' });
    expect(fakes.brave.requests).toHaveLength(2);
    expect(fakes.pixabay.requests).toHaveLength(2);
  });
});

describe('GET /api/v1/images/similar/', () => {
  it('answers 400 without q and query, with the engine error too when both are wrong', async () => {
    const message = 'Provide q (the image caption) and/or query (a fallback seed).';
    expect(await similar({})).toEqual({ status: 400, body: { q: message } });
    expect(await similar({ q: '  ', query: '\t', exclude_url: 'https://x.example/' })).toEqual({
      status: 400,
      body: { q: message },
    });
    const both = await similar({ engine: 'nope' });
    expect(Object.keys(both.body)).toEqual(['q', 'engine']);
    expect(await similar({ q: 'x', engine: 'nope' })).toEqual({
      status: 400,
      body: {
        engine: 'Unknown engine(s): nope. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").',
      },
    });
    expect(fakes.brave.requests.length + fakes.pixabay.requests.length).toBe(0);
  });

  it('searches page 1 of images for the cleaned caption and drops exclude_url', async () => {
    const caption = uniq('Red   fox in snow');
    const seed = caption.replace(/\s+/g, ' ');
    fakes.brave.setMediaResults('images', seed, [braveImage(1), braveImage(2)]);
    fakes.pixabay.setHits(seed, [pixabayHit(1)]);
    const res = await similar({
      q: `  ${caption} | Flickr `,
      query: 'ignored',
      exclude_url: 'https://photos.example/1',
      safe: 'off',
      lang: 'fr',
    });
    expect(res).toEqual({
      status: 200,
      body: { query: seed, engine: ALL, results: [pixabayResult(1), braveImageResult(2)], unresponsive: [] },
    });
    expect(query(fakes.brave.requestsTo('images')[0])).toEqual({
      q: seed,
      count: '10',
      safesearch: 'off',
      search_lang: 'fr',
      country: 'FR',
    });
    expect(query(fakes.pixabay.requests[0])).toMatchObject({ q: seed, page: '1', safesearch: 'false', lang: 'fr' });
  });

  it('falls back to the collapsed query when there is no caption, and honours engine', async () => {
    const seed = uniq('arctic fox');
    const res = await similar({ query: `  ${seed.replace(' ', '   ')} `, engine: 'provider_03' });
    expect(res.status).toBe(200);
    expect(res.body.query).toBe(seed);
    expect(res.body.engine).toEqual(['provider_03']);
    expect(res.body).not.toHaveProperty('tab');
    expect(res.body).not.toHaveProperty('page');
    expect(fakes.brave.requests).toHaveLength(0);
    expect(fakes.pixabay.requests[0]!.query.get('q')).toBe(seed);
  });

  it('keeps a caption whose cleaned seed would be too short', async () => {
    const res = await similar({ q: 'A - Some Site', engine: 'provider_02' });
    expect(res.body.query).toBe('A - Some Site');
  });
});

describe('GET /api/v1/news/', () => {
  it('interleaves Brave and World News in that order, with World News mapped and aged', async () => {
    const q = uniq('climate summit');
    fakes.brave.setMediaResults('news', q, [
      {
        type: 'news_result',
        title: 'Brave story 1',
        url: 'https://news.example.org/1',
        description: 'Delegates from ...',
        age: '2 hours ago',
        page_age: '2025-11-20T08:00:00',
        thumbnail: { src: 'https://imgs.search.brave.com/n1' },
        meta_url: { scheme: 'https', netloc: 'news.example.org', hostname: 'news.example.org', path: '› 1' },
      },
      { type: 'news_result', title: 'Brave story 2', url: 'https://other.example/2', source: 'Other Times' },
    ]);
    const now = Date.now();
    fakes.worldnews.setNews(q, [
      {
        id: 1,
        title: 'Ports reopen after storm',
        text: 'Full text',
        summary: 'Ports reopened',
        url: 'https://www.ports.example/reopen',
        image: 'https://www.ports.example/img.jpg',
        publish_date: worldNewsTime(now - 3 * DAY_MS - 3600_000),
        language: 'en',
      },
      {
        id: 2,
        title: 'No summary',
        text: 'Only text',
        summary: null,
        url: 'https://wire.example/2',
        publish_date: worldNewsTime(now - 5 * 3600_000 - 600_000),
      },
      { id: 3, title: 'Fresh', url: 'https://wire.example/3', publish_date: worldNewsTime(now - 150_000) },
    ]);
    const res = await news({ q });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      query: q,
      tab: 'news',
      page: 1,
      engine: ALL,
      unresponsive: [],
      results: [
        {
          title: 'Brave story 1',
          url: 'https://news.example.org/1',
          description: 'Delegates from ...',
          age: '2 hours ago',
          source: 'news.example.org',
          hostname: 'news.example.org',
          thumbnail: 'https://imgs.search.brave.com/n1',
        },
        {
          title: 'Ports reopen after storm',
          url: 'https://www.ports.example/reopen',
          description: 'Ports reopened',
          age: '3 days ago',
          source: 'World News API',
          hostname: 'ports.example',
          thumbnail: 'https://www.ports.example/img.jpg',
        },
        {
          title: 'Brave story 2',
          url: 'https://other.example/2',
          description: '',
          age: '',
          source: 'Other Times',
          hostname: '',
          thumbnail: '',
        },
        {
          title: 'No summary',
          url: 'https://wire.example/2',
          description: 'Only text',
          age: '5 hours ago',
          source: 'World News API',
          hostname: 'wire.example',
          thumbnail: '',
        },
        {
          title: 'Fresh',
          url: 'https://wire.example/3',
          description: '',
          age: '2 minutes ago',
          source: 'World News API',
          hostname: 'wire.example',
          thumbnail: '',
        },
      ],
    });
    expect(fakes.worldnews.requests[0]!.headers['x-api-key']).toBe(fakes.worldnews.key);
  });

  it('maps page, date and language per upstream (Brave page index and freshness, World News offset and earliest date)', async () => {
    const q = uniq('dated news');
    const before = Date.now();
    const res = await news({ q, page: '2', date: 'w', lang: 'en', safe: 'off' });
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(query(fakes.brave.requestsTo('news')[0])).toEqual({
      q,
      count: '10',
      offset: '1',
      safesearch: 'off',
      search_lang: 'en',
      country: 'US',
      freshness: 'pw',
    });
    const wn = query(fakes.worldnews.requests[0]);
    const { 'earliest-publish-date': earliest, ...rest } = wn;
    expect(rest).toEqual({
      text: q,
      number: '10',
      offset: '10',
      sort: 'publish-time',
      'sort-direction': 'DESC',
      language: 'en',
    });
    expect(earliest).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const at = Date.parse(`${earliest!.replace(' ', 'T')}Z`);
    expect(at).toBeGreaterThanOrEqual(before - 7 * DAY_MS - 1000);
    expect(at).toBeLessThanOrEqual(after - 7 * DAY_MS);
    // the fake filters like the real API (its stories are n*10 hours old, odd ones English): a week of English stories
    const first = await news({ q, date: 'w', lang: 'en', engine: 'provider_02' });
    expect(first.body.results.map((r) => r.title)).toEqual([1, 3, 5, 7, 9, 11, 13, 15].map((n) => `${q}: story ${n}`));
  });

  it('never caches World News, while Brave answers from the cache', async () => {
    const q = uniq('uncached news');
    await news({ q });
    await news({ q });
    expect(fakes.worldnews.requests).toHaveLength(2);
    expect(fakes.brave.requestsTo('news')).toHaveLength(1);
  });

  it('does not ask Brave past page 10, where its offset ends', async () => {
    const res = await news({ q: uniq('deep news'), page: '11' });
    expect(res.status).toBe(200);
    expect(fakes.brave.requests).toHaveLength(0);
    expect(fakes.worldnews.requests[0]!.query.get('offset')).toBe('100');
  });

  it('treats quota errors and garbage as failures of that provider only', async () => {
    fakes.worldnews.failWith('quota');
    const partial = await news({ q: uniq('quota') });
    expect(partial.status).toBe(200);
    expect(partial.body.unresponsive).toEqual([{ engine: 'provider_07', reason: 'error' }]);
    expect(partial.body.results.length).toBe(10);
    expect((await healthRow('provider_07'))?.last_error).toContain('402');

    fakes.worldnews.failWith(null);
    fakes.brave.setMode({ kind: 'garbage' });
    const garbage = await news({ q: uniq('garbage') });
    expect(garbage.status).toBe(200);
    expect(garbage.body.unresponsive).toEqual([{ engine: 'provider_01', reason: 'error' }]);
    expect(garbage.body.results.every((r) => r.source === 'World News API')).toBe(true);
  });
});

describe('GET /api/v1/videos/', () => {
  it('interleaves Sepia first, then Brave, every field mapped', async () => {
    const q = uniq('sourdough');
    fakes.sepia.setVideos(q, [
      {
        id: 1,
        name: 'Intro to sourdough',
        duration: 612,
        nsfw: false,
        publishedAt: '2024-01-05T09:15:00.000Z',
        url: 'https://framatube.org/w/abc',
        thumbnailUrl: 'https://framatube.org/lazy-static/thumbnails/abc.jpg',
        language: { id: 'en', label: 'English' },
      },
      {
        id: 2,
        name: 'Long bake',
        duration: 3725,
        nsfw: false,
        publishedAt: '2023-11-30T22:00:00.000Z',
        url: 'https://tube.example:8443/w/def',
        previewUrl: 'https://tube.example:8443/previews/def.jpg',
      },
    ]);
    fakes.brave.setMediaResults('videos', q, [
      {
        type: 'video_result',
        title: 'Sourdough for beginners',
        url: 'https://www.youtube.com/watch?v=abc123',
        age: '1 year ago',
        video: { duration: '12:34', views: 120345, creator: 'Bake Lab', publisher: 'YouTube' },
        thumbnail: { src: 'https://imgs.search.brave.com/v1' },
        meta_url: { scheme: 'https', netloc: 'youtube.com', hostname: 'www.youtube.com', path: '› watch' },
      },
      { type: 'video_result', title: 'Bare', url: 'https://v.example/2' },
      { type: 'video_result', title: 'Third', url: 'https://v.example/3', video: { duration: '1:02:03' } },
    ]);
    const res = await videos({ q });
    expect(res).toEqual({
      status: 200,
      body: {
        query: q,
        tab: 'videos',
        page: 1,
        engine: ALL,
        unresponsive: [],
        results: [
          {
            title: 'Intro to sourdough',
            url: 'https://framatube.org/w/abc',
            age: 'January 05, 2024',
            source: 'PeerTube',
            duration: '10:12',
            hostname: 'framatube.org',
            thumbnail: 'https://framatube.org/lazy-static/thumbnails/abc.jpg',
          },
          {
            title: 'Sourdough for beginners',
            url: 'https://www.youtube.com/watch?v=abc123',
            age: '1 year ago',
            source: 'YouTube',
            duration: '12:34',
            hostname: 'www.youtube.com',
            thumbnail: 'https://imgs.search.brave.com/v1',
          },
          {
            title: 'Long bake',
            url: 'https://tube.example:8443/w/def',
            age: 'November 30, 2023',
            source: 'PeerTube',
            duration: '1:02:05',
            hostname: 'tube.example:8443',
            thumbnail: 'https://tube.example:8443/previews/def.jpg',
          },
          { title: 'Bare', url: 'https://v.example/2', age: '', source: '', duration: '', hostname: '', thumbnail: '' },
          {
            title: 'Third',
            url: 'https://v.example/3',
            age: '',
            source: '',
            duration: '1:02:03',
            hostname: '',
            thumbnail: '',
          },
        ],
      },
    });
  });

  it('maps safe search to nsfw, page to a 0-based start, language and date to Sepia filters', async () => {
    const q = uniq('nsfw');
    const safe = await videos({ q, engine: 'provider_02' });
    expect(query(fakes.sepia.requests[0])).toEqual({
      search: q,
      start: '0',
      count: '10',
      sort: '-match',
      nsfw: 'false',
    });
    // the fake marks every 5th default video NSFW: safe search hides them
    expect(safe.body.results.map((r) => r.title)).not.toContain(`${q} video 5`);

    const off = await videos({ q, engine: 'provider_02', safe: 'no' });
    expect(fakes.sepia.requests[1]!.query.get('nsfw')).toBe('both');
    expect(off.body.results.map((r) => r.title)).toContain(`${q} video 5`);

    const before = Date.now();
    await videos({ q, engine: 'provider_01', page: '4', lang: 'fr', date: 'd' });
    const after = Date.now();
    const { startDate, ...rest } = query(fakes.sepia.requests[2]);
    expect(rest).toEqual({
      search: q,
      start: '30',
      count: '10',
      sort: '-match',
      nsfw: 'false',
      'languageOneOf[]': 'fr',
    });
    const at = Date.parse(startDate!);
    expect(at).toBeGreaterThanOrEqual(before - DAY_MS - 60_000);
    expect(at).toBeLessThanOrEqual(after - DAY_MS);
    expect(query(fakes.brave.requestsTo('videos')[0])).toEqual({
      q,
      count: '10',
      offset: '3',
      safesearch: 'strict',
      search_lang: 'fr',
      country: 'FR',
      freshness: 'pd',
    });
  });

  it('never waits for a hung provider past its timeout, and returns the others', async () => {
    fakes.sepia.setMode({ kind: 'hang' });
    // the hung index never answers: only its timeout can end the request (how soon: the bench's `hung` section)
    const res = await videos({ q: uniq('hung') });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([{ engine: 'provider_06', reason: 'timeout' }]);
    expect(res.body.results).toHaveLength(10);
    // Only Brave answered: its videos name their publisher, never Sepia's "PeerTube".
    expect(res.body.results.every((r) => r.source === 'YouTube')).toBe(true);
    expect((await healthRow('provider_06'))?.ok).toBe(false);
  });

  it('answers 502 when Sepia and Brave both fail, and counts nothing', async () => {
    const before = await usage();
    fakes.sepia.failWith('server_error');
    fakes.brave.setMode({ kind: 'stall' });
    const res = await videos({ q: uniq('videos down') });
    expect(res).toEqual({
      status: 502,
      body: {
        detail: 'All search providers failed.',
        unresponsive: [
          { engine: 'provider_06', reason: 'error' },
          { engine: 'provider_01', reason: 'timeout' },
        ],
      },
    });
    expect(await usage()).toBe(before);
  });

  it('serves a repeated Sepia search from the cache', async () => {
    const q = uniq('cached videos');
    const first = await videos({ q, engine: 'provider_04' });
    const second = await videos({ q, engine: 'provider_04' });
    expect(second).toEqual(first);
    expect(fakes.sepia.requests).toHaveLength(1);
  });
});

describe('media endpoints: usage', () => {
  it('count one search per request, after a successful fetch only', async () => {
    await t.app.lifecycle.flush();
    await db.pool.query('DELETE FROM usage_monthly');
    await images({ q: uniq('usage images') });
    await news({ q: uniq('usage news'), engine: 'provider_01,provider_02' });
    await videos({ q: uniq('usage videos') });
    await similar({ q: uniq('usage similar') });
    expect(await usage()).toBe(4);
    await images({ q: '' });
    await similar({});
    fakes.brave.failWith('invalid_key');
    fakes.pixabay.failWith('invalid_key');
    expect((await images({ q: uniq('usage failed') })).status).toBe(502);
    expect(await usage()).toBe(4);
  });
});

describe('media endpoints on instances that lack providers', () => {
  let bare: TestApp;
  let braveOnly: TestApp;
  let sepiaOnly: TestApp;
  beforeAll(async () => {
    bare = await buildTestApp(db, { ...UNTHROTTLED, DISABLED_PROVIDERS: 'provider_06' });
    braveOnly = await buildTestApp(db, {
      ...UNTHROTTLED,
      BRAVE_BASE_URL: fakes.brave.baseUrl,
      BRAVE_API_KEY: fakes.brave.key,
      PIXABAY_BASE_URL: fakes.pixabay.baseUrl,
      WORLDNEWS_BASE_URL: fakes.worldnews.baseUrl,
      DISABLED_PROVIDERS: 'provider_06',
    });
    sepiaOnly = await buildTestApp(db, { ...UNTHROTTLED, SEPIA_BASE_URL: fakes.sepia.baseUrl });
  });
  afterAll(async () => {
    await bare?.close();
    await braveOnly?.close();
    await sepiaOnly?.close();
  });

  it('answer 503 naming every provider in scope and what it lacks, and count nothing', async () => {
    const before = await usage(bare);
    expect(await images({ q: uniq('bare') }, bare)).toEqual({
      status: 503,
      body: {
        detail:
          'No image search provider in the requested scope is configured on this instance: ' +
          'provider_01 (Brave Search) needs BRAVE_API_KEY; provider_05 (Pixabay) needs PIXABAY_API_KEY.',
      },
    });
    expect((await news({ q: uniq('bare') }, bare)).body.detail).toBe(
      'No news search provider in the requested scope is configured on this instance: ' +
        'provider_01 (Brave Search) needs BRAVE_API_KEY; provider_07 (World News API) needs WORLDNEWS_API_KEY.',
    );
    expect((await videos({ q: uniq('bare') }, bare)).body.detail).toBe(
      'No video search provider in the requested scope is configured on this instance: ' +
        'provider_06 (Sepia Search (PeerTube)) is disabled by DISABLED_PROVIDERS; provider_01 (Brave Search) needs BRAVE_API_KEY.',
    );
    expect((await similar({ q: uniq('bare') }, bare)).status).toBe(503);
    expect(await usage(bare)).toBe(before);
  });

  it('scope follows engine: without Pixabay, engine=provider_02 is a 503 naming Pixabay, provider_01 a 200', async () => {
    expect(await images({ q: uniq('scope'), engine: 'provider_02' }, braveOnly)).toEqual({
      status: 503,
      body: {
        detail:
          'No image search provider in the requested scope is configured on this instance: provider_05 (Pixabay) needs PIXABAY_API_KEY.',
      },
    });
    expect((await news({ q: uniq('scope'), engine: 'provider_03' }, braveOnly)).body.detail).toBe(
      'No news search provider in the requested scope is configured on this instance: provider_07 (World News API) needs WORLDNEWS_API_KEY.',
    );
    const ok = await images({ q: uniq('scope'), engine: 'provider_01' }, braveOnly);
    expect(ok.status).toBe(200);
    expect(ok.body.results).toHaveLength(10);
    expect(fakes.pixabay.requests).toHaveLength(0);
    expect(fakes.worldnews.requests).toHaveLength(0);
  });

  it('keeps a configured provider that sits a page out as configured: 200 with no results', async () => {
    const res = await news({ q: uniq('past brave'), page: '12' }, braveOnly);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expect(res.body.unresponsive).toEqual([]);
    expect(fakes.brave.requests).toHaveLength(0);
  });

  it('serve videos from keyless Sepia alone on an instance with no keys', async () => {
    const res = await videos({ q: uniq('keyless') }, sepiaOnly);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(10);
    expect(res.body.results.every((r) => r.source === 'PeerTube')).toBe(true);
    expect(res.body.unresponsive).toEqual([]);
  });
});
