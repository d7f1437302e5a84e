import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { startSiteFake, type SiteFake } from '../fakes/site.js';
import { buildTestApp, searchesCounted, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * The page-contents endpoints against a real app, a real database and a fake web site on
 * 127.0.0.1 (allowed through CONTENTS_ALLOW_HOSTS): what they answer, what they refuse, what they
 * count, and web search with `contents=n`.
 */

type Body = Record<string, unknown>;

let db: TestDatabase;
let site: SiteFake;
let fakes: WebFakes;
let t: TestApp;
let apiKey: string;
let userId: number;

async function call(method: 'GET' | 'POST', url: string, payload?: unknown, app: TestApp = t) {
  const res = await app.app.inject({
    method,
    url,
    headers: { authorization: `Api-Key ${apiKey}` },
    ...(payload === undefined ? {} : { payload: payload as Body }),
  });
  return { status: res.statusCode, headers: res.headers, body: res.json() as Body };
}
const read = (params: Record<string, string>) => call('GET', `/api/v1/contents/?${new URLSearchParams(params)}`);
const readMany = (payload: unknown) => call('POST', '/api/v1/contents/', payload);
const usage = () => searchesCounted(t, db, userId);

beforeAll(async () => {
  db = await createTestDatabase();
  site = await startSiteFake();
  fakes = await startWebFakes();
  t = await buildTestApp(db, {
    ...fakes.env,
    ...UNTHROTTLED,
    CONTENTS_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    CONTENTS_TIMEOUT_SECONDS: '30',
  });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'reader'));
});

afterEach(() => {
  site.setRobots({ status: 200 });
});

afterAll(async () => {
  await t?.close();
  await site?.close();
  await fakes?.close();
  await db?.drop();
});

describe('GET /api/v1/contents/', () => {
  it("answers a page's main content as markdown with every field of the page object", async () => {
    const url = `${site.url}/article.html`;
    const res = await read({ url });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'url',
        'final_url',
        'canonical_url',
        'title',
        'byline',
        'site_name',
        'published',
        'language',
        'excerpt',
        'content_type',
        'format',
        'content',
        'length',
        'truncated',
        'fetched_at',
        'cached',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      url,
      final_url: url,
      content_type: 'text/html',
      format: 'markdown',
      truncated: false,
    });
    expect(typeof res.body.content).toBe('string');
    expect((res.body.content as string).length).toBe(res.body.length);
    expect(res.body.title).not.toBe('');
    expect(Number.isNaN(Date.parse(res.body.fetched_at as string))).toBe(false);
  });

  it('reads a page once: the next read within the TTL is answered from the cache', async () => {
    const url = `${site.url}/article.html?cache-test`;
    const first = await read({ url });
    const second = await read({ url });
    expect(first.body.cached).toBe(false);
    expect(second.body.cached).toBe(true);
    expect(second.body.content).toBe(first.body.content);
    expect(site.requestsFor('/article.html').filter((r) => r.path === '/article.html').length).toBeGreaterThan(0);
    const fresh = await read({ url, fresh: 'true' });
    expect(fresh.body.cached).toBe(false);
  });

  it('answers text without markup when format=text', async () => {
    const res = await read({ url: `${site.url}/article.html`, format: 'text' });
    expect(res.status).toBe(200);
    expect(res.body.format).toBe('text');
    expect(res.body.content).not.toMatch(/^#{1,6} |\]\(|\*\*/m);
  });

  it('cuts the content at max_chars and says so, with the whole length', async () => {
    const res = await read({ url: `${site.url}/article.html`, max_chars: '100' });
    expect(res.status).toBe(200);
    expect(res.body.truncated).toBe(true);
    expect((res.body.content as string).length).toBeLessThanOrEqual(100);
    expect(res.body.length as number).toBeGreaterThan(100);
  });

  it('answers 400 naming each invalid parameter', async () => {
    expect((await read({})).body).toMatchObject({ url: expect.any(String) });
    expect((await read({})).status).toBe(400);
    const bad = await read({ url: `${site.url}/article.html`, format: 'html', max_chars: '99' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body).sort()).toEqual(['format', 'max_chars']);
  });

  it("answers 400 with the reason for the caller's URL, and counts nothing", async () => {
    const before = await usage();
    for (const url of ['ftp://example.com/', 'http://user:pw@example.com/', `http://${'a'.repeat(2050)}.com/`]) {
      const res = await read({ url });
      expect(res.status, url).toBe(400);
      expect(res.body.reason, url).toBe('invalid_url');
    }
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://[::1]/']) {
      const res = await read({ url });
      expect(res.status, url).toBe(400);
      expect(res.body.reason, url).toBe('blocked_address');
    }
    expect(await usage()).toBe(before);
  });

  it("answers 502 with the reason for the site's failures, and gives the search back", async () => {
    const before = await usage();
    const missing = await read({ url: `${site.url}/no-such-page.html` });
    expect(missing.status).toBe(502);
    expect(missing.body).toMatchObject({ reason: 'http_status', status: 404 });
    expect(typeof missing.body.detail).toBe('string');
    const robots = await read({ url: `${site.url}/private/page.html` });
    expect(robots.status).toBe(502);
    expect(robots.body.reason).toBe('robots_disallowed');
    expect(await usage()).toBe(before);
  });

  it('counts one search per page read, a cached one included', async () => {
    const before = await usage();
    await read({ url: `${site.url}/article.html?count` });
    await read({ url: `${site.url}/article.html?count` });
    expect(await usage()).toBe(before + 2);
  });

  it('refuses without a key before looking at the URL', async () => {
    const res = await t.app.inject({ url: '/api/v1/contents/?url=ftp://x' });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /api/v1/contents/', () => {
  it('answers the pages read and the pages not read, each in the order asked, and counts the pages read', async () => {
    const before = await usage();
    const urls = [
      `${site.url}/article.html?batch`,
      'ftp://nope/',
      `${site.url}/no-such-page.html`,
      `${site.url}/notes.txt`,
    ];
    const res = await readMany({ urls, format: 'text', max_chars: 5000 });
    expect(res.status).toBe(200);
    const results = res.body.results as Body[];
    const failed = res.body.failed as Body[];
    expect(results.map((r) => r.url)).toEqual([urls[0], urls[3]]);
    expect(results.every((r) => r.format === 'text')).toBe(true);
    expect(failed.map((f) => [f.url, f.reason])).toEqual([
      [urls[1], 'invalid_url'],
      [urls[2], 'http_status'],
    ]);
    expect(await usage()).toBe(before + 2);
  });

  it('answers 400 for a malformed body and counts nothing', async () => {
    const before = await usage();
    expect((await readMany({ urls: [] })).status).toBe(400);
    expect((await readMany({ urls: Array.from({ length: 11 }, (_, i) => `${site.url}/a${i}`) })).status).toBe(400);
    expect((await readMany({ urls: [1, 2] })).status).toBe(400);
    expect((await readMany([`${site.url}/article.html`])).status).toBe(400);
    expect(await usage()).toBe(before);
  });
});

describe('POST /api/v1/contents/ and the monthly quota', () => {
  it('refuses pages past the quota with 429 and reserves none of them', async () => {
    const quotaDb = await createTestDatabase();
    const capped = await buildTestApp(quotaDb, {
      ...UNTHROTTLED,
      API_MONTHLY_QUOTA: '3',
      CONTENTS_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
      CONTENTS_TIMEOUT_SECONDS: '30',
    });
    try {
      const { userId: cappedUser, apiKey: cappedKey } = await createUserWithKey(quotaDb.pool, 'capped');
      const post = (urls: string[]) =>
        capped.app.inject({
          method: 'POST',
          url: '/api/v1/contents/',
          headers: { authorization: `Api-Key ${cappedKey}` },
          payload: { urls },
        });
      const four = await post(['a', 'b', 'c', 'd'].map((p) => `${site.url}/article.html?${p}`));
      expect(four.statusCode).toBe(429);
      expect(four.json().detail).toMatch(/quota/i);
      expect(await searchesCounted(capped, quotaDb, cappedUser)).toBe(0);
      const three = await post(['a', 'b', 'c'].map((p) => `${site.url}/article.html?${p}`));
      expect(three.statusCode).toBe(200);
      expect(await searchesCounted(capped, quotaDb, cappedUser)).toBe(3);
    } finally {
      await capped.close();
      await quotaDb.drop();
    }
  });
});

describe('GET /api/v1/web/?contents=n', () => {
  it('adds the page contents to the first n results and leaves the others as they were', async () => {
    const q = 'night trains contents';
    const pages = [`${site.url}/article.html?web`, `${site.url}/no-such-page.html`, `${site.url}/notes.txt`];
    for (const engine of [fakes.brave, fakes.mojeek, fakes.marginalia, fakes.staan]) {
      engine.setResults(
        q,
        pages.map((url, i) => ({ url, title: `Result ${i}` })),
      );
    }
    const before = await usage();
    const res = await call('GET', `/api/v1/web/?${new URLSearchParams({ q, contents: '2' })}`);
    expect(res.status).toBe(200);
    const results = res.body.results as Body[];
    const first = results[0]!;
    const second = results[1]!;
    expect(first.url).toBe(pages[0]);
    expect(first.contents).toMatchObject({ final_url: pages[0], format: 'markdown' });
    expect((first.contents as Body).url).toBeUndefined();
    expect(second.contents_error).toMatchObject({ reason: 'http_status' });
    expect(results[2]!.contents).toBeUndefined();
    expect(results[2]!.contents_error).toBeUndefined();
    // Four engines and one page read: the page that failed gives its search back.
    expect(await usage()).toBe(before + 5);
  });

  it('answers 400 for contents out of 0..5', async () => {
    const res = await call('GET', '/api/v1/web/?q=x&contents=6');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['contents']);
  });
});

describe('MCP read_page', () => {
  async function rpc(method: string, params: Body, app: TestApp = t) {
    const res = await app.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Api-Key ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: { jsonrpc: '2.0', id: 1, method, params },
    });
    const text = res.body.startsWith('event:') ? res.body.split('\ndata: ')[1]!.split('\n')[0]! : res.body;
    return JSON.parse(text) as { result?: Body; error?: Body };
  }

  it('is listed, and answers the page as text with the page object as structured content', async () => {
    const listed = await rpc('tools/list', {});
    const tools = (listed.result!.tools as Body[]).map((tool) => tool.name);
    expect(tools).toContain('read_page');
    const url = `${site.url}/article.html?mcp`;
    const called = await rpc('tools/call', { name: 'read_page', arguments: { url, max_chars: 500 } });
    const result = called.result!;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as Body).final_url).toBe(url);
    expect((result.structuredContent as Body).truncated).toBe(true);
    const text = (result.content as Body[])[0]!.text as string;
    expect(text).toContain(url);
    expect(text).toContain('Truncated');
  });

  it('is not listed when page contents are off', async () => {
    const off = await buildTestApp(db, { ...UNTHROTTLED, CONTENTS_ENABLED: 'false' });
    try {
      const listed = await rpc('tools/list', {}, off);
      expect((listed.result!.tools as Body[]).map((tool) => tool.name)).not.toContain('read_page');
    } finally {
      await off.close();
    }
  });
});

describe('CONTENTS_ENABLED=false', () => {
  it('answers 404 for the contents paths', async () => {
    const off = await buildTestApp(db, { ...UNTHROTTLED, CONTENTS_ENABLED: 'false' });
    try {
      const res = await off.app.inject({
        url: `/api/v1/contents/?url=${encodeURIComponent(`${site.url}/article.html`)}`,
        headers: { authorization: `Api-Key ${apiKey}` },
      });
      expect(res.statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });
});
