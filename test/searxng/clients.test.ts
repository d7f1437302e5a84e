import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthlySearches } from '../../src/limits/usage.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * Real SearXNG clients from npm pointed at Sift as their SearXNG instance, over HTTP on
 * 127.0.0.1: LangChain JS `SearxngSearch` (@langchain/community), `@agentic/searxng` and the
 * `mcp-searxng` MCP server (run as its users run it, over stdio). They live in a test package of
 * their own (test/clients/package.json, installed by .ci/run) to keep `npm ci` lean; without it
 * these tests are skipped, and a test named so says how to install them.
 */

const CLIENTS_DIR = path.resolve(import.meta.dirname, '../clients');
const installed = existsSync(path.join(CLIENTS_DIR, 'node_modules', 'mcp-searxng', 'package.json'));
const clientsRequire = createRequire(path.join(CLIENTS_DIR, 'package.json'));

async function importClient<T>(specifier: string): Promise<T> {
  return (await import(pathToFileURL(clientsRequire.resolve(specifier)).href)) as T;
}

let db: TestDatabase;
let fakes: AllFakes;
let t: TestApp;
let base: string;
let key: string;
let userId: number;

describe.runIf(!installed)('real SearXNG clients', () => {
  it('are skipped: their packages are not installed (run `npm ci --prefix test/clients`)', () => {
    expect(installed).toBe(false);
  });
});

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  t = await buildTestApp(db, { ...fakes.env, API_THROTTLE_BURST: '10000/min', API_THROTTLE_SUSTAINED: '100000/day' });
  base = await listen(t.app);
  ({ userId, apiKey: key } = await createUserWithKey(db.pool, 'clients'));
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe.runIf(installed)('real SearXNG clients against Sift', () => {
  describe('LangChain JS SearxngSearch', () => {
    interface Tool {
      invoke(input: string): Promise<unknown>;
    }
    type Ctor = new (fields: {
      apiBase: string;
      params?: Record<string, unknown>;
      headers?: Record<string, string>;
    }) => Tool;
    let SearxngSearch: Ctor;
    beforeAll(async () => {
      ({ SearxngSearch } = await importClient<{ SearxngSearch: Ctor }>('@langchain/community/tools/searxng_search'));
    });

    it('gets results through a base URL carrying the key (its POST with an empty JSON body)', async () => {
      const before = await monthlySearches(db.pool, userId);
      const tool = new SearxngSearch({ apiBase: `${base}/searxng/${key}` });
      const text = String(await tool.invoke('jupiter langchain'));
      const first = JSON.parse(`[${text}]`)[0] as { title: string; link: string; snippet: string };
      expect(first.link).toMatch(/^https:\/\/shared\.example\/jupiter-langchain\//);
      expect(first.title).toBe('jupiter langchain result 1');
      expect(first.snippet).not.toContain('<strong>');
      await t.app.lifecycle.flush();
      // Its POST has no body: priced from the query string, the four web engines as over REST.
      expect(await monthlySearches(db.pool, userId)).toBe(before + 4);
    });

    it('gets results through a base URL ending in a slash (`//search`, as n8n credentials give it)', async () => {
      for (const apiBase of [`${base}/searxng/${key}/`, `${base}/`]) {
        const tool = new SearxngSearch({ apiBase, headers: { 'X-API-Key': key } });
        const text = String(await tool.invoke('otters slash'));
        const first = JSON.parse(`[${text}]`)[0] as { link: string };
        expect(first.link, apiBase).toMatch(/^https:\/\/shared\.example\/otters-slash\//);
      }
    });

    it('gets the instant answer and the infobox when there are no results, with the key in a header', async () => {
      const tool = new SearxngSearch({
        apiBase: base,
        params: { engines: 'wikipedia' },
        headers: { 'X-API-Key': key },
      });
      expect(await tool.invoke('7 * 6')).toBe('7 * 6 = 42');
      expect(await tool.invoke('jupiter')).toBe(
        'Jupiter is the fifth planet from the Sun and the largest in the Solar System.',
      );
    });
  });

  describe('@agentic/searxng', () => {
    interface SearxngClient {
      search(opts: { query: string; engines?: string[]; categories?: string[] }): Promise<{
        query: string;
        results: { url: string; title: string; content: string; engine: string; category: string }[];
        suggestions: string[];
      }>;
    }
    type Ctor = new (opts: { apiBaseUrl: string }) => SearxngClient;
    let SearxngClientClass: Ctor;
    beforeAll(async () => {
      ({ SearxngClient: SearxngClientClass } = await importClient<{ SearxngClient: Ctor }>('@agentic/searxng'));
    });

    it('gets web results of the engines it names, and image results', async () => {
      const client = new SearxngClientClass({ apiBaseUrl: `${base}/searxng/${key}` });
      const web = await client.search({ query: 'otters agentic', engines: ['brave', 'mojeek'] });
      expect(web.query).toBe('otters agentic');
      expect(web.results.length).toBeGreaterThan(0);
      expect(new Set(web.results.map((r) => r.engine))).toEqual(new Set(['brave', 'mojeek']));
      expect(web.results[0]).toMatchObject({ category: 'general', title: 'otters agentic result 1' });
      // Brave's query suggestions (Brave asked, and this instance has Brave Suggest).
      expect(web.suggestions).toContain('otters agentic meaning');
      const images = await client.search({ query: 'otters agentic', categories: ['images'] });
      expect(images.results.length).toBeGreaterThan(0);
      expect(images.results.every((r) => r.category === 'images')).toBe(true);
    });
  });

  describe('mcp-searxng', () => {
    let client: Client;
    beforeAll(async () => {
      client = new Client({ name: 'sift-test', version: '1.0.0' });
      // Its `mcp-searxng` command, as `npx mcp-searxng` runs it.
      const dir = path.join(CLIENTS_DIR, 'node_modules', 'mcp-searxng');
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { bin: Record<string, string> };
      const entry = path.join(dir, pkg.bin['mcp-searxng']!);
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [entry],
          // HTTP Basic auth with the key as the password, as its README configures it.
          env: { PATH: process.env.PATH ?? '', SEARXNG_URL: base, AUTH_USERNAME: 'sift', AUTH_PASSWORD: key },
          stderr: 'ignore',
        }),
      );
    });
    afterAll(async () => {
      await client?.close();
    });

    const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

    it('gets results, the instant answer and the infobox with HTTP Basic auth', async () => {
      const found = (await client.callTool({
        name: 'searxng_web_search',
        arguments: { query: 'jupiter' },
      })) as CallToolResult;
      expect(found.isError).toBeFalsy();
      expect(text(found)).toContain('https://shared.example/jupiter/1');
      expect(text(found)).toContain('Infobox: Jupiter');
      const answered = (await client.callTool({
        name: 'searxng_web_search',
        arguments: { query: '7 * 6' },
      })) as CallToolResult;
      expect(text(answered)).toContain('Direct answer: 7 * 6 = 42');
    });

    it('gets suggestions from /autocompleter', async () => {
      const res = (await client.callTool({
        name: 'searxng_search_suggestions',
        arguments: { query: 'rus' },
      })) as CallToolResult;
      expect(res.isError).toBeFalsy();
      expect(text(res)).toContain('rus meaning');
    });
  });
});

/*
 * Clients that are not npm packages, by the requests they send and what their panels keep (read
 * from their sources): LangChain Python's SearxSearchWrapper asks the base URL itself with
 * `requests` (which follows redirects), Perplexica keeps a video only with
 * `thumbnail && url && title && iframe_src`, LibreChat dates a news item by `publishedDate`.
 */
describe('recorded SearXNG clients against Sift', () => {
  type Json = Record<string, unknown>;
  /** The headers python-requests sends, with the key as its users pass it (`headers=`). */
  const pythonRequests = () => ({
    'user-agent': 'python-requests/2.32.3',
    'accept-encoding': 'gzip, deflate',
    accept: '*/*',
    'x-api-key': key,
  });

  it("answers LangChain Python's SearxSearchWrapper pointed at the root, through SearXNG's redirect", async () => {
    const query = new URLSearchParams({ language: 'en', format: 'json', q: 'otters python' });
    const first = await fetch(`${base}/?${query}`, { headers: pythonRequests(), redirect: 'manual' });
    expect(first.status).toBe(308);
    expect(first.headers.get('location')).toBe(`/search?${query}`);
    // requests follows the redirect with the same method and headers (same host).
    const res = await fetch(`${base}/?${query}`, { headers: pythonRequests() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: Json[] };
    expect(body.results[0]?.url).toMatch(/^https:\/\/shared\.example\/otters-python\//);
  });

  it('answers the same wrapper pointed at the base URL with the key, with or without its trailing slash', async () => {
    const query = new URLSearchParams({ language: 'en', format: 'json', q: 'otters keyed' });
    for (const host of [`${base}/searxng/${key}`, `${base}/searxng/${key}/`]) {
      const res = await fetch(`${host}?${query}`, { headers: { ...pythonRequests(), 'x-api-key': '' } });
      expect(res.status, host).toBe(200);
      expect(((await res.json()) as { results: Json[] }).results.length, host).toBeGreaterThan(0);
    }
  });

  it("fills Perplexica's video panel: videos pass its filter (thumbnail, url, title and iframe_src)", async () => {
    // Perplexica's video search: the engines it names, format=json, GET.
    const query = new URLSearchParams({ format: 'json', q: 'otters video', engines: 'youtube' });
    const res = await fetch(`${base}/searxng/${key}/search?${query}`);
    expect(res.status).toBe(200);
    const videos = ((await res.json()) as { results: Json[] }).results;
    expect(videos.length).toBeGreaterThan(0);
    const kept = videos.filter((r) => r.thumbnail && r.url && r.title && r.iframe_src);
    // PeerTube's own videos carry their player page; Brave's keep one for platforms that embed.
    expect(kept.length).toBeGreaterThanOrEqual(10);
    for (const r of kept) expect(String(r.iframe_src)).toMatch(/^https:\/\//);
  });

  it("dates LibreChat's news items: publishedDate parses as the upstream's date", async () => {
    const query = new URLSearchParams({ q: 'otters news', format: 'json', categories: 'news', pageno: '1' });
    const res = await fetch(`${base}/search?${query}`, { headers: { 'x-api-key': key } });
    const news = ((await res.json()) as { results: Json[] }).results.filter((r) => r.category === 'news');
    expect(news.length).toBeGreaterThan(0);
    const dated = news.map((r) => ({ link: r.url, date: r.publishedDate }));
    for (const item of dated) {
      expect(typeof item.date, String(item.link)).toBe('string');
      expect(Number.isNaN(new Date(String(item.date)).getTime()), String(item.link)).toBe(false);
    }
  });
});
