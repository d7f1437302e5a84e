import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { startSiteFake, type SiteFake } from '../fakes/site.js';
import { buildTestApp, searchesCounted, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Tavily's API at /tavily against the real app, database, engine fakes and a fake web site, with
 * the requests tavily-python sends replayed as it sends them: `POST {api_base_url}/search` (and
 * /extract) with its headers and the JSON body `json.dumps` writes of the parameters not left at
 * None (tavily/tavily.py, `_search` and `_extract`; `extract` always sends `timeout`, 30 by
 * default). tavily-python reads an error as `detail.error` and classifies it by status: 401
 * InvalidAPIKeyError, 429 UsageLimitExceededError, 400 BadRequestError, 403 ForbiddenError.
 */

type Body = Record<string, unknown>;

let db: TestDatabase;
let fakes: AllFakes;
let site: SiteFake;
let t: TestApp;
let apiKey: string;
let userId: number;

/** The headers tavily-python's session sends (requests' own, then TavilyClient's). */
const pythonHeaders = (key: string | null) => ({
  'user-agent': 'python-requests/2.32.3',
  'accept-encoding': 'gzip, deflate',
  accept: '*/*',
  connection: 'keep-alive',
  'content-type': 'application/json',
  ...(key === null ? { 'x-tavily-access-mode': 'keyless' } : { authorization: `Bearer ${key}` }),
  'x-client-source': key === null ? 'tavily-python-keyless' : 'tavily-python',
});

/** A request as tavily-python sends it: `payload` is the exact text of its json.dumps body. */
async function python(path: '/search' | '/extract', payload: string, key: string | null = apiKey, app = t) {
  const res = await app.app.inject({ method: 'POST', url: `/tavily${path}`, headers: pythonHeaders(key), payload });
  return { status: res.statusCode, headers: res.headers, body: res.json() as Body };
}

const usage = () => searchesCounted(t, db, userId);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  site = await startSiteFake();
  t = await buildTestApp(db, {
    ...fakes.env,
    ...UNTHROTTLED,
    CONTENTS_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    CONTENTS_TIMEOUT_SECONDS: '30',
  });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'tavily'));
});

afterAll(async () => {
  await t?.close();
  await site?.close();
  await fakes?.close();
  await db?.drop();
});

/** Every web engine answers `pages` (site URLs) for `q`. */
function pinResults(q: string, pages: string[]) {
  const web = fakes.web;
  for (const engine of [web.brave, web.mojeek, web.marginalia, web.staan]) {
    engine.setResults(
      q,
      pages.map((url, i) => ({
        url,
        title: `${q} page ${i}`,
        description: `About <b>${q}</b> &amp; more, page ${i}.`,
      })),
    );
  }
}

describe('POST /tavily/search as tavily-python sends it', () => {
  it("answers Tavily's response shape with plain-text snippets, rank scores and a request id", async () => {
    const before = await usage();
    const res = await python('/search', '{"query": "night trains tavily", "max_results": 3}');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['answer', 'follow_up_questions', 'images', 'query', 'request_id', 'response_time', 'results'].sort(),
    );
    expect(res.body).toMatchObject({ query: 'night trains tavily', answer: null, images: [] });
    expect(res.body.request_id).toMatch(UUID);
    expect(typeof res.body.response_time).toBe('number');
    const results = res.body.results as Body[];
    expect(results).toHaveLength(3);
    for (const r of results) {
      // published_date when an engine dated the result.
      expect(
        Object.keys(r)
          .filter((k) => k !== 'published_date')
          .sort(),
      ).toEqual(['content', 'raw_content', 'score', 'title', 'url']);
      expect(r.raw_content).toBeNull();
      expect(r.content).not.toMatch(/[<>]/);
    }
    const scores = results.map((r) => r.score as number);
    expect(scores[0]).toBeLessThanOrEqual(1);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(new Set(scores).size).toBe(3);
    // The web search of every engine: four, as GET /api/v1/web/ counts.
    expect(await usage()).toBe(before + 4);
  });

  it('reads the pages of the results with include_raw_content, a page not read giving its search back', async () => {
    const q = 'raw content tavily';
    pinResults(q, [`${site.url}/article.html?tavily`, `${site.url}/no-such-page.html`]);
    const before = await usage();
    const res = await python(
      '/search',
      `{"query": "${q}", "include_raw_content": "text", "max_results": 3, "include_favicon": true, "include_usage": true}`,
    );
    expect(res.status).toBe(200);
    const results = res.body.results as Body[];
    expect(results.map((r) => r.url)).toEqual([`${site.url}/article.html?tavily`, `${site.url}/no-such-page.html`]);
    expect(results[0]!.content).toBe(`About ${q} & more, page 0.`);
    expect(typeof results[0]!.raw_content).toBe('string');
    expect((results[0]!.raw_content as string).length).toBeGreaterThan(200);
    expect(results[0]!.raw_content).not.toMatch(/[#*[\]]/);
    expect(results[1]!.raw_content).toBeNull();
    // The favicon an engine gave (Brave's), else the site's /favicon.ico.
    expect(results[0]!.favicon).toMatch(/^https:\/\/imgs\.search\.brave\.com\//);
    // Four engines and three pages asked; one page read: the two others give theirs back.
    expect(res.body.usage).toEqual({ credits: 5 });
    expect(await usage()).toBe(before + 5);
  });

  it('searches the news for topic news, one search', async () => {
    const before = await usage();
    const res = await python('/search', '{"query": "ceasefire talks", "topic": "news", "days": 3}');
    expect(res.status).toBe(200);
    const results = res.body.results as Body[];
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(5);
    expect(results[0]!.url).toMatch(/^https:\/\//);
    expect(await usage()).toBe(before + 1);
  });

  it('adds the image search with include_images, one search more', async () => {
    const before = await usage();
    const res = await python('/search', '{"query": "red pandas", "include_images": true}');
    expect(res.status).toBe(200);
    const images = res.body.images as unknown[];
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image).toMatch(/^https:\/\//);
    expect(await usage()).toBe(before + 5);
  });

  it('keeps only the results of include_domains and drops those of exclude_domains', async () => {
    const q = 'domains tavily';
    const web = fakes.web;
    for (const engine of [web.brave, web.mojeek, web.marginalia, web.staan]) {
      engine.setResults(q, [
        { url: 'https://docs.example.org/a', title: 'a' },
        { url: 'https://www.example.org/b', title: 'b' },
        { url: 'https://other.example/c', title: 'c' },
      ]);
    }
    const included = await python('/search', `{"query": "${q}", "include_domains": ["example.org"]}`);
    expect((included.body.results as Body[]).map((r) => r.url)).toEqual([
      'https://docs.example.org/a',
      'https://www.example.org/b',
    ]);
    const excluded = await python('/search', `{"query": "${q}", "exclude_domains": ["docs.example.org"]}`);
    expect((excluded.body.results as Body[]).map((r) => r.url)).toEqual([
      'https://www.example.org/b',
      'https://other.example/c',
    ]);
  });

  it('gives the published date an engine knows, and keeps the results from start_date to end_date', async () => {
    const q = 'dated tavily';
    const web = fakes.web;
    for (const engine of [web.brave, web.mojeek, web.marginalia]) engine.setResults(q, []);
    web.staan.setResults(q, [
      { url: 'https://dated.example/new', publishedDate: '2025-03-14' },
      { url: 'https://dated.example/old', publishedDate: '2019-06-01' },
    ]);
    const all = await python('/search', `{"query": "${q}"}`);
    // The upstream's machine date (ISO 8601 UTC) where the engine sent one.
    expect((all.body.results as Body[]).map((r) => String(r.published_date).slice(0, 10))).toEqual([
      '2025-03-14',
      '2019-06-01',
    ]);
    const since = await python('/search', `{"query": "${q}", "start_date": "2025-01-01", "end_date": "2025-12-31"}`);
    expect((since.body.results as Body[]).map((r) => r.url)).toEqual(['https://dated.example/new']);
  });

  it('ignores fields it does not know and takes null as absent, as Tavily does', async () => {
    const res = await python(
      '/search',
      '{"query": "unknown fields", "search_depth": "advanced", "include_answer": true, "auto_parameters": false, "country": "france", "exact_match": true, "chunks_per_source": 2, "some_future_field": {"a": 1}, "time_range": null}',
    );
    expect(res.status).toBe(200);
    expect(res.body.answer).toBeNull();
  });
});

describe('POST /tavily/extract as tavily-python sends it', () => {
  it('answers the pages read and the failed ones, counting the pages read', async () => {
    const before = await usage();
    const ok = `${site.url}/article.html?extract`;
    const missing = `${site.url}/no-such-page.html?extract`;
    const res = await python('/extract', `{"urls": ["${ok}", "${missing}"], "include_favicon": true, "timeout": 30}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['failed_results', 'request_id', 'response_time', 'results']);
    const [result] = res.body.results as Body[];
    expect(result).toMatchObject({ url: ok, favicon: `${site.url}/favicon.ico` });
    expect(typeof result!.title).toBe('string');
    expect((result!.raw_content as string).length).toBeGreaterThan(200);
    expect(res.body.failed_results).toEqual([{ url: missing, error: expect.stringMatching(/^http_status: /) }]);
    expect(await usage()).toBe(before + 1);
  });

  it('takes one URL as a string', async () => {
    const res = await python('/extract', `{"urls": "${site.url}/article.html?one", "format": "text", "timeout": 30}`);
    expect(res.status).toBe(200);
    expect((res.body.results as Body[]).map((r) => r.url)).toEqual([`${site.url}/article.html?one`]);
  });

  it('keeps the chunks of each page most relevant to the query', async () => {
    const url = `${site.url}/article.html?chunks`;
    const whole = await python('/extract', `{"urls": ["${url}"], "timeout": 30}`);
    const page = (whole.body.results as Body[])[0]!.raw_content as string;
    // A word of the page's body that is not in its first paragraph.
    const paragraphs = page.split(/\n\s*\n/).filter((p) => p.trim().length > 80);
    const word = paragraphs
      .at(-1)!
      .match(/[A-Za-z]{7,}/g)!
      .find((w) => !paragraphs[0]!.toLowerCase().includes(w.toLowerCase()))!;
    const res = await python(
      '/extract',
      `{"urls": ["${url}"], "timeout": 30, "query": "${word}", "chunks_per_source": 2}`,
    );
    const chunks = ((res.body.results as Body[])[0]!.raw_content as string).split(' [...] ');
    expect(chunks.length).toBeLessThanOrEqual(2);
    expect(chunks[0]!.toLowerCase()).toContain(word.toLowerCase());
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(500);
  });

  it('answers 400 for more than 20 URLs, counting nothing', async () => {
    const before = await usage();
    const urls = Array.from({ length: 21 }, (_, i) => `"${site.url}/article.html?${i}"`).join(', ');
    const res = await python('/extract', `{"urls": [${urls}], "timeout": 30}`);
    expect(res.status).toBe(400);
    expect((res.body.detail as Body).error).toMatch(/^urls: /);
    expect(await usage()).toBe(before);
  });
});

describe('with page contents off (CONTENTS_ENABLED=false)', () => {
  it('answers raw_content null, counting the engines only, and 404 for extract', async () => {
    const off = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, CONTENTS_ENABLED: 'false' });
    try {
      const { apiKey: key, userId: id } = await createUserWithKey(db.pool, 'tavily-off');
      const res = await python('/search', '{"query": "contents off", "include_raw_content": true}', key, off);
      expect(res.status).toBe(200);
      for (const r of res.body.results as Body[]) expect(r.raw_content).toBeNull();
      expect(await searchesCounted(off, db, id)).toBe(4);
      const extract = await python('/extract', `{"urls": ["${site.url}/article.html"], "timeout": 30}`, key, off);
      expect(extract.status).toBe(404);
      expect((extract.body.detail as Body).error).toMatch(/CONTENTS_ENABLED=false/);
      expect(await searchesCounted(off, db, id)).toBe(4);
    } finally {
      await off.close();
    }
  });
});

describe("errors in Tavily's shape, by the status tavily-python classifies", () => {
  it('401 (InvalidAPIKeyError) without a key and with a wrong one', async () => {
    const keyless = await python('/search', '{"query": "x"}', null);
    expect(keyless.status).toBe(401);
    expect(typeof (keyless.body.detail as Body).error).toBe('string');
    const wrong = await python('/search', '{"query": "x"}', 'sk_live_not_a_real_key_0000000000');
    expect(wrong.status).toBe(401);
    expect(Object.keys(wrong.body)).toEqual(['detail']);
    expect(Object.keys(wrong.body.detail as Body)).toEqual(['error']);
  });

  it('400 (BadRequestError) for a value of the wrong type, naming the field, counting nothing', async () => {
    const before = await usage();
    const res = await python('/search', '{"query": "x", "max_results": "five"}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: { error: 'max_results: Must be an integer.' } });
    const missing = await python('/search', '{"max_results": 2}');
    expect(missing.status).toBe(400);
    expect((missing.body.detail as Body).error).toMatch(/^query: /);
    const notJson = await python('/search', '{"query": ');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({ detail: { error: 'Request body is not valid JSON.' } });
    expect(await usage()).toBe(before);
  });

  it('429 (UsageLimitExceededError) past the monthly quota, with Retry-After', async () => {
    const small = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, API_MONTHLY_QUOTA: '3' });
    try {
      const { apiKey: key } = await createUserWithKey(db.pool, 'tavily-quota');
      // Four engines: more than the quota holds once the body is read.
      const res = await python('/search', '{"query": "quota"}', key, small);
      expect(res.status).toBe(429);
      expect((res.body.detail as Body).error).toMatch(/quota/i);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });

  it('429 (UsageLimitExceededError) past the rate limit', async () => {
    const slow = await buildTestApp(db, { ...fakes.env, API_THROTTLE_BURST: '1/min' });
    try {
      const { apiKey: key } = await createUserWithKey(db.pool, 'tavily-rate');
      expect((await python('/search', '{"query": "rate one"}', key, slow)).status).toBe(200);
      const res = await python('/search', '{"query": "rate two"}', key, slow);
      expect(res.status).toBe(429);
      expect(typeof (res.body.detail as Body).error).toBe('string');
    } finally {
      await slow.close();
    }
  });

  it('404 in the same shape for a path Tavily has that Sift does not', async () => {
    const res = await python('/search', '{}').then(() =>
      t.app.inject({ method: 'POST', url: '/tavily/crawl', headers: pythonHeaders(apiKey), payload: '{"url": "x"}' }),
    );
    expect(res.statusCode).toBe(404);
    expect(typeof (res.json() as { detail: Body }).detail.error).toBe('string');
  });
});
