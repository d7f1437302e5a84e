import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_KEY } from '../../src/auth/api-key-auth.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { startSiteFake, type SiteFake } from '../fakes/site.js';
import { buildTestApp, searchesCounted, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * Tavily's JavaScript SDK, @tavily/core, pointed at Sift with nothing changed but its base URL
 * (`apiBaseURL: "<sift>/tavily"`) and its key (a Sift key), over HTTP on 127.0.0.1. It lives in
 * the test package of real clients (test/clients/package.json, installed by .ci/run); without it
 * these tests are skipped, and a test named so says how to install it.
 *
 * @tavily/core reads an error answer's `detail.error` as the message of the Error it throws (and
 * falls back to "<status> Error: <body>" when that is missing): the message proves the shape.
 */

const CLIENTS_DIR = path.resolve(import.meta.dirname, '../clients');
const installed = existsSync(path.join(CLIENTS_DIR, 'node_modules', '@tavily', 'core', 'package.json'));
const clientsRequire = createRequire(path.join(CLIENTS_DIR, 'package.json'));

interface SearchResponse {
  query: string;
  answer?: string | null;
  responseTime: number;
  requestId: string;
  images: { url: string; description?: string }[];
  results: { title: string; url: string; content: string; rawContent?: string | null; score: number }[];
  usage?: { credits: number };
}
interface ExtractResponse {
  results: { url: string; title: string | null; rawContent: string; favicon?: string }[];
  failedResults: { url: string; error: string }[];
  responseTime: number;
  requestId: string;
}
interface TavilyClient {
  search(query: string, options?: Record<string, unknown>): Promise<SearchResponse>;
  extract(urls: string[], options?: Record<string, unknown>): Promise<ExtractResponse>;
}
type Tavily = (options: { apiKey: string; apiBaseURL: string }) => TavilyClient;

let db: TestDatabase;
let fakes: AllFakes;
let site: SiteFake;
let t: TestApp;
let base: string;
let key: string;
let userId: number;
let tavily: Tavily;

describe.runIf(!installed)('@tavily/core', () => {
  it('is skipped: its package is not installed (run `npm ci --prefix test/clients`)', () => {
    expect(installed).toBe(false);
  });
});

describe.runIf(installed)('@tavily/core against Sift', () => {
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
    base = await listen(t.app);
    ({ userId, apiKey: key } = await createUserWithKey(db.pool, 'tavily-js'));
    const sdk = (await import(pathToFileURL(clientsRequire.resolve('@tavily/core')).href)) as { tavily: Tavily };
    tavily = sdk.tavily;
  });

  afterAll(async () => {
    await t?.close();
    await site?.close();
    await fakes?.close();
    await db?.drop();
  });

  const client = (apiKey = key) => tavily({ apiKey, apiBaseURL: `${base}/tavily` });

  it('searches: results with scores, a request id and a response time', async () => {
    const before = await searchesCounted(t, db, userId);
    const res = await client().search('night trains sdk', { maxResults: 3, includeUsage: true });
    expect(res.query).toBe('night trains sdk');
    expect(res.results).toHaveLength(3);
    expect(res.results[0]).toMatchObject({ title: 'night trains sdk result 1' });
    expect(res.results[0]!.score).toBeGreaterThan(res.results[2]!.score);
    expect(res.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof res.responseTime).toBe('number');
    expect(res.images).toEqual([]);
    expect(res.usage).toEqual({ credits: 4 });
    expect(await searchesCounted(t, db, userId)).toBe(before + 4);
  });

  it('searches with includeRawContent: the pages of the results as markdown', async () => {
    const q = 'raw content sdk';
    const web = fakes.web;
    for (const engine of [web.brave, web.mojeek, web.marginalia, web.staan]) {
      engine.setResults(q, [{ url: `${site.url}/article.html?sdk`, title: 'The article' }]);
    }
    const res = await client().search(q, { includeRawContent: 'markdown', includeImages: true });
    expect(res.results).toHaveLength(1);
    expect(res.results[0]!.rawContent).toEqual(expect.any(String));
    expect(res.results[0]!.rawContent!.length).toBeGreaterThan(200);
    expect(res.images.length).toBeGreaterThan(0);
    expect(res.images[0]!.url).toMatch(/^https:\/\//);
  });

  it('extracts pages, the unreadable ones in failedResults', async () => {
    const ok = `${site.url}/article.html?sdk-extract`;
    const missing = `${site.url}/missing.html?sdk`;
    const res = await client().extract([ok, missing], { format: 'text', includeFavicon: true });
    expect(res.results.map((r) => r.url)).toEqual([ok]);
    expect(res.results[0]!.rawContent.length).toBeGreaterThan(200);
    expect(res.results[0]!.favicon).toBe(`${site.url}/favicon.ico`);
    expect(res.failedResults.map((r) => r.url)).toEqual([missing]);
    expect(res.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('throws the 401 (InvalidAPIKeyError) message for a wrong key', async () => {
    await expect(client('sk_live_not_a_real_key_0000000000').search('anything')).rejects.toThrow(
      new Error(INVALID_KEY),
    );
  });

  it('throws the 400 (BadRequestError) message naming the field', async () => {
    await expect(client().search('anything', { maxResults: 50 })).rejects.toThrow(
      new Error('max_results: Must be from 0 to 20.'),
    );
  });

  it('throws the 429 (UsageLimitExceededError) message past the quota', async () => {
    const small = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, API_MONTHLY_QUOTA: '1' });
    try {
      const smallBase = await listen(small.app);
      const { apiKey } = await createUserWithKey(db.pool, 'tavily-js-quota');
      const limited = tavily({ apiKey, apiBaseURL: `${smallBase}/tavily` });
      await expect(limited.extract([`${site.url}/article.html?a`, `${site.url}/article.html?b`])).rejects.toThrow(
        /^Monthly search quota exhausted/,
      );
    } finally {
      await small.close();
    }
  });
});
