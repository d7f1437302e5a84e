import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { buildTestApp, type TestApp, UNTHROTTLED, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * The SearXNG-compatible API against SearXNG's JSON output (searx/webutils.get_json_response,
 * searx/result_types), on the real app with every provider faked: each field, the categories
 * and engines, answers, infoboxes, corrections, unresponsive engines, the bodies the clients
 * post, and its errors.
 */

type Json = Record<string, unknown>;

let db: TestDatabase;
let fakes: AllFakes;
let t: TestApp;
let key: string;
let userId: number;
let counter = 0;
/** A query no earlier test asked (the runner caches every provider's answer). */
const uniq = (q: string) => `${q} sx${++counter}`;

async function search(params: Record<string, string>, init: { method?: 'GET' | 'POST' } = {}) {
  const res = await t.app.inject({
    method: init.method ?? 'GET',
    url: `/search?${new URLSearchParams(params)}`,
    headers: { 'x-api-key': key },
  });
  return { status: res.statusCode, headers: res.headers, body: res.json() as Json };
}

const results = (body: Json) => body.results as Json[];

/** A Brave video result as Brave sends one (upstreams.md), for a watch URL. */
const braveVideo = (url: string) => ({
  type: 'video_result',
  title: `Video at ${url}`,
  url,
  description: 'A video.',
  age: '2 days ago',
  page_age: '2026-12-01T09:30:00',
  video: { duration: '03:10', views: 10, creator: 'Someone', publisher: 'Platform' },
  thumbnail: { src: 'https://imgs.search.brave.com/v.jpg', original: `${url}/hq.jpg` },
  meta_url: { scheme: 'https', netloc: new URL(url).host, hostname: new URL(url).hostname, path: '› watch' },
});

const usage = () => searchesCounted(t, db, userId);

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  t = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, PROVIDER_SUSPEND_AFTER_FAILURES: '0' });
  ({ userId, apiKey: key } = await createUserWithKey(db.pool, 'searxer'));
});

afterEach(() => {
  for (const p of fakes.providers) p.server.setMode({ kind: 'normal' });
  fakes.resetRequests();
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe('GET /search?format=json: the response', () => {
  it("has exactly SearXNG's top-level fields, with their types", async () => {
    const q = uniq('jupiter');
    const res = await search({ q, format: 'json' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'answers',
        'corrections',
        'infoboxes',
        'number_of_results',
        'query',
        'results',
        'suggestions',
        'unresponsive_engines',
      ].sort(),
    );
    expect(res.body.query).toBe(q);
    expect(results(res.body).length).toBeGreaterThan(0);
    expect(res.body.number_of_results).toBe(results(res.body).length);
    for (const field of ['answers', 'corrections', 'infoboxes', 'suggestions', 'unresponsive_engines']) {
      expect(Array.isArray(res.body[field]), field).toBe(true);
    }
  });

  it("gives each web result SearXNG's result fields: plain-text content, the engines that found it, its ranks", async () => {
    const q = uniq('rust');
    fakes.web.brave.setResults(q, [
      {
        url: 'https://doc.rust-lang.org/book/?x=1#intro',
        title: 'The <b>Rust</b> Book',
        description: 'Learn &amp; love <strong>Rust</strong>, the language.',
        age: 'May 1, 2024',
        publishedDate: '2024-05-01T10:00:00',
      },
      { url: 'https://brave-only.example/' },
    ]);
    fakes.web.mojeek.setResults(q, [
      { url: 'https://mojeek-only.example/' },
      { url: 'https://doc.rust-lang.org/book/?x=1#intro' },
    ]);
    const res = await search({ q, format: 'json', engines: 'brave,mojeek' });
    expect(res.status).toBe(200);
    const [first] = results(res.body);
    expect(first).toEqual({
      url: 'https://doc.rust-lang.org/book/?x=1#intro',
      title: 'The Rust Book',
      content: 'Learn & love Rust, the language.',
      engine: 'brave',
      template: 'default.html',
      parsed_url: ['https', 'doc.rust-lang.org', '/book/', '', 'x=1', 'intro'],
      img_src: '',
      thumbnail: '',
      priority: '',
      engines: ['brave', 'mojeek'],
      positions: [1, 2],
      score: expect.any(Number),
      category: 'general',
      publishedDate: '2024-05-01T10:00:00+00:00',
      pubdate: '2024-05-01 10:00:00+0000',
      iframe_src: '',
      audio_src: '',
      length: null,
      views: '',
      author: '',
      metadata: '',
      open_group: false,
      close_group: false,
    });
    // Found by two engines, it outscores the results only one engine found.
    const others = results(res.body).slice(1);
    expect(others.map((r) => r.engines)).toEqual([['mojeek'], ['brave']]);
    for (const r of others) expect(first!.score as number).toBeGreaterThan(r.score as number);
  });

  it('answers with results, an instant answer in answers and a Wikipedia card as an infobox', async () => {
    const res = await search({ q: 'jupiter', format: 'json' });
    expect(res.body.infoboxes).toEqual([
      {
        infobox: 'Jupiter',
        id: 'https://en.wikipedia.org/wiki/Jupiter',
        content: 'Jupiter is the fifth planet from the Sun and the largest in the Solar System.',
        img_src: 'https://upload.wikimedia.org/Jupiter.jpg',
        urls: [{ title: 'Wikipedia', url: 'https://en.wikipedia.org/wiki/Jupiter' }],
        attributes: [{ label: 'Description', value: 'Fifth planet from the Sun' }],
        engine: 'wikipedia',
        engines: ['wikipedia'],
        url: null,
        template: 'default.html',
        parsed_url: null,
        title: '',
        thumbnail: '',
        priority: '',
        positions: '',
        score: 0,
        category: '',
        publishedDate: null,
      },
    ]);
    const math = await search({ q: '7 * 6', format: 'json' });
    expect(math.body.answers).toEqual(['7 * 6 = 42']);
    const units = await search({ q: '10 km in miles', format: 'json' });
    expect(units.body.answers).toEqual(['10 km = 6.21371 mi']);
  });

  it('lists the film card after the Wikipedia one, with its attributes', async () => {
    const res = await search({ q: 'breaking bad', format: 'json' });
    const boxes = res.body.infoboxes as Json[];
    expect(boxes.map((b) => b.engine)).toEqual(['wikipedia', 'thetvdb']);
    expect(boxes[1]).toMatchObject({
      infobox: 'Breaking Bad',
      urls: [{ title: 'TheTVDB', url: 'https://thetvdb.com/series/breaking-bad' }],
      attributes: expect.arrayContaining([{ label: 'Year', value: '2008' }]),
    });
  });

  it('looks for cards on page 1 without a time range only, so that no engine is asked twice', async () => {
    const q = uniq('jupiter');
    await search({ q, format: 'json', time_range: 'week' });
    await search({ q, format: 'json', pageno: '2' });
    expect(fakes.cards.wikipedia.requests).toHaveLength(0);
    expect(fakes.web.brave.requestsTo('web')).toHaveLength(2);
    await search({ q, format: 'json' });
    expect(fakes.cards.wikipedia.requests.length).toBeGreaterThan(0);
    // The cards' web search is the search's own: Brave asked once more, not twice.
    expect(fakes.web.brave.requestsTo('web')).toHaveLength(3);
  });

  it("puts Brave's spelling correction in corrections", async () => {
    const q = uniq('helo wrld');
    fakes.web.brave.setAltered(q, 'hello world');
    const res = await search({ q, format: 'json' });
    expect(res.body.corrections).toEqual(['hello world']);
  });

  it('words a broken connection as SearXNG does (network error), never as a suspension', async () => {
    fakes.web.staan.setMode({ kind: 'reset' });
    const res = await search({ q: uniq('offline'), format: 'json' });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive_engines).toEqual([['staan', 'network error']]);
  });

  it('words a connection never made as SearXNG does (HTTP connection error), and REST says unreachable for both', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const other = await buildTestApp(db, {
      ...fakes.env,
      ...UNTHROTTLED,
      PROVIDER_SUSPEND_AFTER_FAILURES: '0',
      MOJEEK_BASE_URL: `http://127.0.0.1:${port}`,
    });
    try {
      fakes.web.staan.setMode({ kind: 'reset' });
      const q = uniq('refused');
      const res = await other.app.inject({
        url: `/search?${new URLSearchParams({ q, format: 'json' })}`,
        headers: { 'x-api-key': key },
      });
      expect(res.json().unresponsive_engines).toEqual([
        ['mojeek', 'HTTP connection error'],
        ['staan', 'network error'],
      ]);
      const rest = await other.app.inject({
        url: `/api/v1/web/?${new URLSearchParams({ q: uniq('refused') })}`,
        headers: { 'x-api-key': key },
      });
      expect(JSON.parse(rest.body).unresponsive).toEqual([
        { engine: 'provider_02', reason: 'unreachable' },
        { engine: 'provider_04', reason: 'unreachable' },
      ]);
    } finally {
      await other.close();
    }
  });

  it('lists a failed engine in unresponsive_engines as an [engine, reason] pair, sorted by engine', async () => {
    fakes.web.mojeek.setMode({ kind: 'status', status: 500 });
    fakes.web.staan.setMode({ kind: 'status', status: 503 });
    const res = await search({ q: uniq('partial'), format: 'json' });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive_engines).toEqual([
      ['mojeek', 'HTTP error'],
      ['staan', 'HTTP error'],
    ]);
    expect(results(res.body).every((r) => !(r.engines as string[]).includes('mojeek'))).toBe(true);
  });

  it('answers 502 JSON with unresponsive_engines when every engine asked failed, and counts nothing', async () => {
    fakes.web.brave.setMode({ kind: 'status', status: 500 });
    const before = await usage();
    const res = await search({ q: uniq('outage'), format: 'json', engines: 'brave', pageno: '2' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: 'All search providers failed.',
      detail: 'All search providers failed.',
      unresponsive_engines: [['brave', 'HTTP error']],
    });
    expect(await usage()).toBe(before);
  });
});

describe('POST /search: the bodies the clients send', () => {
  it('searches with an empty JSON body and everything in the query string (LangChain, n8n)', async () => {
    const q = uniq('langchain');
    const res = await t.app.inject({
      method: 'POST',
      url: `/search?${new URLSearchParams({ q, format: 'json', pageno: '1', safesearch: '0' })}`,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().query).toBe(q);
  });

  it('reads a form body and a JSON body, the body winning over the query string as in SearXNG', async () => {
    const q = uniq('form');
    const form = await t.app.inject({
      method: 'POST',
      url: '/search?q=ignored',
      payload: new URLSearchParams({ q, format: 'json', categories: 'images' }).toString(),
      headers: { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.statusCode).toBe(200);
    expect(form.json().query).toBe(q);
    expect((form.json().results as Json[]).every((r) => r.category === 'images')).toBe(true);
    const json = await t.app.inject({
      method: 'POST',
      url: '/search',
      payload: { q, format: 'json', pageno: 2, engines: ['mojeek'] },
      headers: { 'x-api-key': key },
    });
    expect(json.statusCode).toBe(200);
    expect((json.json().results as Json[]).every((r) => (r.engines as string[]).join() === 'mojeek')).toBe(true);
  });

  it('refuses a body that is not JSON with a 400 JSON error', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/search',
      payload: '{"q": ',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'Request body is not valid JSON.' });
  });
});

describe('categories and engines', () => {
  it('searches images with img_src and thumbnail_src, from Brave and Pixabay', async () => {
    const res = await search({ q: uniq('cats'), format: 'json', categories: 'images' });
    const images = results(res.body);
    expect(new Set(images.map((r) => r.engine))).toEqual(new Set(['brave', 'pixabay']));
    for (const r of images) {
      expect(r).toMatchObject({ template: 'images.html', category: 'images' });
      expect(r.img_src).toMatch(/^https:\/\//);
      expect(r.thumbnail_src).toMatch(/^https:\/\//);
    }
  });

  it('searches videos with their length in seconds, and news with the news providers', async () => {
    const videos = results((await search({ q: uniq('otters'), format: 'json', categories: 'videos' })).body);
    expect(videos.length).toBeGreaterThan(0);
    expect(videos.every((r) => r.template === 'videos.html' && r.category === 'videos')).toBe(true);
    expect(videos.some((r) => typeof r.length === 'number' && (r.length as number) > 0)).toBe(true);
    const news = results((await search({ q: uniq('elections'), format: 'json', categories: 'news' })).body);
    expect(new Set(news.map((r) => r.engine))).toEqual(new Set(['brave', 'worldnews']));
    expect(news.every((r) => r.category === 'news')).toBe(true);
  });

  it("dates news and videos by the upstream's machine date (publishedDate, pubdate), none when it sends none", async () => {
    const q = uniq('harbour');
    fakes.worldnews.setNews(q, [
      {
        title: 'Harbour reopens',
        url: 'https://news.example/harbour',
        summary: 'It reopens.',
        text: '',
        image: '',
        publish_date: '2026-11-30 08:05:00',
      },
      { title: 'Undated', url: 'https://news.example/undated', summary: '', text: '', image: '', publish_date: 'soon' },
    ]);
    const news = results((await search({ q, format: 'json', categories: 'news' })).body);
    const byUrl = new Map(news.map((r) => [r.url, r]));
    expect(byUrl.get('https://news.example/harbour')).toMatchObject({
      publishedDate: '2026-11-30T08:05:00+00:00',
      pubdate: '2026-11-30 08:05:00+0000',
    });
    expect(byUrl.get('https://news.example/undated')).toMatchObject({ publishedDate: null, pubdate: '' });
    // Brave's page_age (no zone: UTC), next to its display age.
    const brave = news.find((r) => r.engine === 'brave');
    expect(brave?.publishedDate).toBe('2025-11-20T08:00:00+00:00');
  });

  it("fills a video's iframe_src from PeerTube's embedUrl and from YouTube, Vimeo and Dailymotion watch URLs", async () => {
    const q = uniq('lathe');
    fakes.web.brave.setMediaResults('videos', q, [
      braveVideo('https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=3'),
      braveVideo('https://vimeo.com/76979871'),
      braveVideo('https://www.dailymotion.com/video/x8abcd1'),
      braveVideo('https://videos.example/watch/1'),
    ]);
    const videos = results((await search({ q, format: 'json', categories: 'videos' })).body);
    const frame = new Map(videos.map((r) => [r.url, r.iframe_src]));
    expect(frame.get('https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=3')).toBe(
      'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ',
    );
    expect(frame.get('https://vimeo.com/76979871')).toBe('https://player.vimeo.com/video/76979871');
    expect(frame.get('https://www.dailymotion.com/video/x8abcd1')).toBe(
      'https://www.dailymotion.com/embed/video/x8abcd1',
    );
    expect(frame.get('https://videos.example/watch/1')).toBe('');
    const peertube = videos.filter((r) => r.engine === 'sepia');
    expect(peertube.length).toBeGreaterThan(0);
    for (const r of peertube) expect(r.iframe_src).toMatch(/^https:\/\/[a-z.]+\/videos\/embed\/[0-9a-f-]{36}$/);
    expect(peertube[0]!.publishedDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
  });

  it('searches places for the map category', async () => {
    const res = await search({ q: 'Berlin', format: 'json', categories: 'map' });
    const [place] = results(res.body);
    expect(place).toMatchObject({ engine: 'openstreetmap', template: 'map.html', category: 'map' });
    expect(typeof place!.latitude).toBe('number');
    expect(typeof place!.longitude).toBe('number');
  });

  it('asks only the engines named, ignoring names it does not have; pixabay alone is an image search', async () => {
    await search({ q: uniq('narrow'), format: 'json', engines: 'mojeek,google,marginalia' });
    expect(fakes.web.mojeek.requests.length).toBe(1);
    expect(fakes.web.marginalia.requests.length).toBe(1);
    expect(fakes.web.brave.requests.length).toBe(0);
    expect(fakes.web.staan.requests.length).toBe(0);
    fakes.resetRequests();
    const images = await search({ q: uniq('pixabay only'), format: 'json', engines: 'pixabay' });
    expect(results(images.body).every((r) => r.engine === 'pixabay')).toBe(true);
    expect(fakes.web.brave.requests.length).toBe(0);
  });

  it('passes pageno, time_range, safesearch and language on as Sift search parameters', async () => {
    await search({
      q: uniq('params'),
      format: 'json',
      engines: 'brave',
      pageno: '3',
      time_range: 'week',
      safesearch: '0',
      language: 'de-DE',
    });
    const [request] = fakes.web.brave.requests;
    expect(request!.query.get('offset')).toBe('2');
    expect(request!.query.get('freshness')).toBe('pw');
    expect(request!.query.get('safesearch')).toBe('off');
    expect(request!.query.get('search_lang')).toBe('de');
  });
});

describe('requests as the clients send them', () => {
  const send = async (url: string, headers: Record<string, string> = { 'x-api-key': key }) => {
    const res = await t.app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.json() as Json };
  };

  it("answers Open WebUI's request: its query URL with q, empty time_range and categories, language en-US", async () => {
    const q = uniq('open webui');
    const params = new URLSearchParams({
      q,
      format: 'json',
      pageno: '1',
      safesearch: '1',
      language: 'en-US',
      time_range: '',
      categories: '',
      theme: 'simple',
      image_proxy: '0',
    });
    const res = await send(`/searxng/${key}/search?${params}`, { accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(results(res.body).length).toBeGreaterThan(0);
    expect(fakes.web.brave.requests[0]!.query.get('search_lang')).toBe('en');
  });

  it("answers LibreChat's request: general, language all, engines Sift does not have", async () => {
    const q = uniq('librechat');
    const params = new URLSearchParams({
      q,
      format: 'json',
      pageno: '1',
      categories: 'general',
      language: 'all',
      safesearch: '0',
      engines: 'google,bing,duckduckgo',
    });
    const res = await send(`/search?${params}`);
    expect(res.status).toBe(200);
    expect(new Set(results(res.body).flatMap((r) => r.engines as string[]))).toEqual(
      new Set(['brave', 'mojeek', 'marginalia', 'staan']),
    );
    expect(fakes.web.brave.requests[0]!.query.has('search_lang')).toBe(false);
  });

  it("answers Perplexica's image search, which names image engines and no category, with images", async () => {
    const params = new URLSearchParams({ q: uniq('perplexica'), format: 'json', engines: 'bing images,google images' });
    const res = await send(`/search?${params}`);
    expect(results(res.body).length).toBeGreaterThan(0);
    expect(results(res.body).every((r) => r.category === 'images' && typeof r.img_src === 'string')).toBe(true);
    const videos = await send(
      `/search?${new URLSearchParams({ q: uniq('perplexica'), format: 'json', engines: 'youtube' })}`,
    );
    expect(results(videos.body).every((r) => r.category === 'videos')).toBe(true);
  });

  it("searches at the key's base URL itself, as LangChain Python's SearxSearchWrapper asks it", async () => {
    const q = uniq('python wrapper');
    for (const base of [`/searxng/${key}`, `/searxng/${key}/`]) {
      const res = await send(`${base}?${new URLSearchParams({ q, format: 'json' })}`, {});
      expect(res.status, base).toBe(200);
      expect(res.body.query).toBe(q);
    }
  });
});

describe('the formats and endpoints scripts use', () => {
  async function raw(path: string, headers: Record<string, string> = { 'x-api-key': key }) {
    const res = await t.app.inject({ method: 'GET', url: path, headers });
    return { status: res.statusCode, headers: res.headers, text: res.body };
  }

  it('writes format=csv as SearXNG does: its columns, CRLF rows, minimal quoting, an attachment', async () => {
    const q = uniq('csv, "quoted"');
    fakes.web.brave.setResults(q, [
      { url: 'https://a.example/one', title: 'One, with a comma', description: 'Said "hi"' },
      { url: 'https://b.example/two', title: 'Two', description: 'plain' },
    ]);
    fakes.web.brave.setSuggestions(q, [`${q} more`]);
    const res = await raw(`/search?${new URLSearchParams({ q, format: 'csv', engines: 'brave' })}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment;Filename=searx_-_${q.replaceAll('"', '_')}.csv`);
    const rows = res.text.split('\r\n');
    expect(rows[0]).toBe('title,url,content,host,engine,score,type');
    expect(rows[1]).toBe('"One, with a comma",https://a.example/one,"Said ""hi""",a.example,brave,1.0,result');
    expect(rows[2]).toMatch(/^Two,https:\/\/b\.example\/two,plain,b\.example,brave,0\.\d+,result$/);
    expect(rows).toContain(`"${q.replaceAll('"', '""')} more",,,,,,suggestion`);
    expect(res.text.endsWith('\r\n')).toBe(true);
  });

  it('writes format=rss as SearXNG does: an RSS 2.0 channel, one item per result, escaped', async () => {
    const q = uniq('rss <feed>');
    fakes.web.brave.setResults(q, [
      {
        url: 'https://a.example/?x=1&y=2',
        title: 'A & B',
        description: '<b>bold</b>',
        publishedDate: '2026-12-01T08:00:00',
      },
    ]);
    const res = await raw(`/search?${new URLSearchParams({ q, format: 'rss', engines: 'brave' })}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(res.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"')).toBe(true);
    const escapedQ = q.replace('<', '&lt;').replace('>', '&gt;');
    expect(res.text).toContain(`<title>SearXNG search: ${escapedQ}</title>`);
    expect(res.text).toContain(`<description>Search results for "${escapedQ}" - SearXNG</description>`);
    expect(res.text).toContain(
      [
        '    <item>',
        '      <title>A &amp; B</title>',
        '      <type>result</type>',
        '      <link>https://a.example/?x=1&amp;y=2</link>',
        '      <description>bold</description>',
        '      <pubDate>2026-12-01 08:00:00+0000</pubDate>',
        '    </item>',
      ].join('\n'),
    );
    expect(res.text.match(/<item>/g)).toHaveLength(1);
  });

  it('answers /healthz with OK as plain text, without a key and counting nothing', async () => {
    const before = await usage();
    const res = await raw('/healthz', {});
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('OK');
    expect(await usage()).toBe(before);
  });

  it("fills suggestions with Brave's query suggestions on a page-1 web search", async () => {
    const q = uniq('suggested');
    fakes.web.brave.setSuggestions(q, [q, `${q} recipes`, `${q} history`]);
    const res = await search({ q, format: 'json' });
    expect(res.body.suggestions).toEqual([`${q} recipes`, `${q} history`]);
    const page2 = await search({ q, format: 'json', pageno: '2' });
    expect(page2.body.suggestions).toEqual([]);
  });

  it('takes the bangs out of the query and searches what they name (!images, !news, !brave, !mojeek)', async () => {
    const q = uniq('otters');
    const images = await search({ q: `!images ${q}`, format: 'json' });
    // The query searched, without its bangs, as SearXNG answers it.
    expect(images.body.query).toBe(q);
    expect(results(images.body).every((r) => r.category === 'images')).toBe(true);
    expect(fakes.web.brave.requestsTo('images').map((r) => r.query.get('q'))).toEqual([q]);
    expect(fakes.web.brave.requestsTo('web')).toHaveLength(0);

    fakes.resetRequests();
    const news = await search({ q: `${q} !news`, format: 'json', categories: 'general' });
    expect(results(news.body).every((r) => r.category === 'news')).toBe(true);
    expect(fakes.worldnews.requests.map((r) => r.query.get('text'))).toEqual([q]);

    fakes.resetRequests();
    const engines = await search({ q: `!mojeek !br ${q}`, format: 'json' });
    expect(new Set(results(engines.body).map((r) => r.engine))).toEqual(new Set(['brave', 'mojeek']));
    expect(fakes.web.mojeek.requests.map((r) => r.query.get('q'))).toEqual([q]);
    expect(fakes.web.staan.requests).toHaveLength(0);

    fakes.resetRequests();
    // Unknown bangs and SearXNG's external ones (!!) are words of the query.
    await search({ q: `!nosuch !!w ${q}`, format: 'json', engines: 'mojeek' });
    expect(fakes.web.mojeek.requests.map((r) => r.query.get('q'))).toEqual([`!nosuch !!w ${q}`]);
  });

  it('refuses a query of bangs only as a query without words', async () => {
    const res = await search({ q: '!images', format: 'json' });
    expect(res.status).toBe(400);
    expect(String(res.body.detail)).toMatch(/^q: /);
  });
});

describe('invalid requests', () => {
  it('refuses an unsupported format, a missing q and bad parameters with a 400 JSON error, counting nothing', async () => {
    const before = await usage();
    const cases: [Record<string, string>, string][] = [
      [{ q: 'x', format: 'xml' }, 'Unsupported format "xml": this API answers format=json, csv or rss.'],
      [{ q: 'x', format: 'html' }, 'Unsupported format "html": this API answers format=json, csv or rss.'],
      [{ format: 'json' }, 'q: This query parameter is required.'],
      [{ q: 'x', pageno: 'two' }, 'pageno: Must be a positive integer.'],
      [{ q: 'x', pageno: '0' }, 'pageno: Must be a positive integer.'],
      [{ q: 'x', time_range: 'century' }, 'time_range: Must be one of day, week, month, year.'],
      [{ q: 'x', safesearch: '5' }, 'safesearch: Must be 0, 1 or 2.'],
    ];
    for (const [params, detail] of cases) {
      const res = await search(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ error: detail, detail });
    }
    expect(await usage()).toBe(before);
  });

  it('never answers 500 to odd parameters', async () => {
    const odd = ['%00', 'a'.repeat(3000), '[]', '{"a":1}', '\u202e', '-1', '1e9'];
    for (const value of odd) {
      for (const field of ['q', 'categories', 'engines', 'language', 'pageno', 'time_range', 'safesearch']) {
        const res = await t.app.inject({
          method: 'GET',
          url: `/search?q=ok&${field}=${encodeURIComponent(value)}`,
          headers: { 'x-api-key': key },
        });
        expect(res.statusCode, `${field}=${value.slice(0, 10)}`).toBeLessThan(500);
      }
    }
  });
});

describe('odd bodies', () => {
  it('never answers 500 to a JSON body of any shape', async () => {
    const bodies = [
      '[]',
      '"q"',
      '42',
      'null',
      '{"q": {"a": 1}}',
      '{"q": ["a", "b"]}',
      '{"q": 7, "pageno": [2]}',
      '{"__proto__": {"q": "x"}, "q": "ok"}',
      '{"engines": [{"a": 1}], "q": "ok"}',
      '{"q": true}',
    ];
    for (const payload of bodies) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/search',
        payload,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
      });
      expect(res.statusCode, payload).toBeLessThan(500);
      expect(res.headers['content-type'], payload).toMatch(/^application\/json/);
    }
  });
});

describe('GET /autocompleter and GET /config', () => {
  it("answers suggestions in OpenSearch's form, and as a plain list to SearXNG's own form", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/autocompleter?q=rus', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-suggestions\+json/);
    const body = res.json() as unknown[];
    expect(body[0]).toBe('rus');
    expect(body[1]).toContain('rus meaning');
    expect(body.slice(2, 4)).toEqual([[], []]);
    const xhr = await t.app.inject({
      method: 'GET',
      url: '/autocompleter?q=rus',
      headers: { 'x-api-key': key, 'x-requested-with': 'XMLHttpRequest' },
    });
    expect(xhr.json()).toEqual(body[1]);
  });

  it('lists the categories and the engines with what each supports, counting no search', async () => {
    const before = await usage();
    const res = await t.app.inject({ method: 'GET', url: '/config', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Json & { engines: Json[] };
    expect(body.categories).toEqual(['general', 'images', 'news', 'videos', 'map']);
    expect(body.engines.map((e) => e.name)).toEqual(
      expect.arrayContaining(['brave', 'mojeek', 'marginalia', 'staan', 'pixabay', 'sepia', 'worldnews', 'wikipedia']),
    );
    expect(body.engines.find((e) => e.name === 'brave')).toEqual({
      name: 'brave',
      categories: ['general', 'images', 'news', 'videos'],
      shortcut: 'br',
      enabled: true,
      paging: true,
      language_support: true,
      languages: [],
      regions: [],
      safesearch: true,
      time_range_support: true,
      timeout: expect.any(Number),
    });
    for (const field of ['instance_name', 'version', 'autocomplete', 'safe_search', 'plugins', 'locales']) {
      expect(body, field).toHaveProperty(field);
    }
    expect(await usage()).toBe(before);
  });
});
