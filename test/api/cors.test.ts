import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * CORS_ORIGINS: off by default (no CORS headers, OPTIONS as before); when set,
 * preflights from a listed origin are answered before authentication, and
 * answers carry the headers a browser needs to hand them (and the rate-limit
 * headers) to the calling page. Checked with inject, then in a real browser.
 */

const APP = 'https://app.example';
const preflight = (origin: string, extra: Record<string, string> = {}) => ({
  origin,
  'access-control-request-method': 'GET',
  'access-control-request-headers': 'authorization',
  ...extra,
});

let db: TestDatabase;
let key: string;
let off: TestApp;
let on: TestApp;
let any: TestApp;

beforeAll(async () => {
  db = await createTestDatabase();
  const user = await createUser(db.pool, { username: 'corsuser' });
  key = (await issueApiKey(db.pool, user.id)).key;
  [off, on, any] = await Promise.all([
    buildTestApp(db),
    buildTestApp(db, { CORS_ORIGINS: `${APP}, http://localhost:5173/`, API_THROTTLE_BURST: '3/min' }),
    buildTestApp(db, { CORS_ORIGINS: '*' }),
  ]);
});

afterAll(async () => {
  await Promise.all([off?.close(), on?.close(), any?.close()]);
  await db?.drop();
});

describe('CORS_ORIGINS configuration', () => {
  it('is empty by default, takes origins (normalised) and *, and refuses anything else', () => {
    expect(parseConfig({}).CORS_ORIGINS).toEqual([]);
    expect(parseConfig({ CORS_ORIGINS: ' https://App.Example:443/ , http://localhost:5173 ' }).CORS_ORIGINS).toEqual([
      'https://app.example',
      'http://localhost:5173',
    ]);
    expect(parseConfig({ CORS_ORIGINS: '*' }).CORS_ORIGINS).toEqual(['*']);
    for (const bad of [
      'app.example',
      'https://app.example/path',
      'ftp://app.example',
      'null',
      'https://u:p@a.example',
    ]) {
      expect(() => parseConfig({ CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
    }
    const problems = (() => {
      try {
        parseConfig({ CORS_ORIGINS: 'https://ok.example,app.example' });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    })();
    expect(problems).toEqual(['CORS_ORIGINS: must be * or origins like https://app.example (got "app.example")']);
  });
});

describe('CORS off (the default)', () => {
  it('adds no CORS header, and OPTIONS is answered as before (authentication first, then 405)', async () => {
    const pre = await off.app.inject({ method: 'OPTIONS', url: '/api/v1/web/', headers: preflight(APP) });
    expect(pre.statusCode).toBe(401);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const keyed = await off.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/web/',
      headers: { ...preflight(APP), authorization: `Api-Key ${key}` },
    });
    expect(keyed.statusCode).toBe(405);
    const get = await off.app.inject({
      url: '/api/v1/key/',
      headers: { origin: APP, authorization: `Api-Key ${key}` },
    });
    expect(get.statusCode).toBe(200);
    expect(Object.keys(get.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });
});

describe('CORS on', () => {
  it('answers a preflight from a listed origin 204 before authentication, with the allowed methods and headers', async () => {
    for (const url of ['/api/v1/web/', '/api/v1/web', '/api/v1/translate/', '/api/v1/nothing/', '/status/health']) {
      const res = await on.app.inject({ method: 'OPTIONS', url, headers: preflight(APP) });
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin'], url).toBe(APP);
      expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST');
      const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(', ');
      expect(allowed).toEqual(
        expect.arrayContaining(['authorization', 'x-api-key', 'content-type', 'x-monitor-token']),
      );
      expect(res.headers['access-control-max-age']).toBe('600');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(String(res.headers.vary)).toMatch(/origin/i);
      expect(res.body).toBe('');
    }
    const local = await on.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/key/',
      headers: preflight('http://localhost:5173'),
    });
    expect(local.statusCode).toBe(204);
    expect(local.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('gives a preflight from an origin not listed, or for a page, no CORS header', async () => {
    for (const [origin, url] of [
      ['https://evil.example', '/api/v1/web/'],
      ['https://app.example.evil.example', '/api/v1/web/'],
      ['http://app.example', '/api/v1/web/'],
      [APP, '/settings/keys'],
      [APP, '/login'],
      [APP, '/status'],
    ] as const) {
      const res = await on.app.inject({ method: 'OPTIONS', url, headers: preflight(origin) });
      expect(res.statusCode, `${origin} ${url}`).toBe(404);
      expect(res.headers['access-control-allow-origin'], `${origin} ${url}`).toBeUndefined();
    }
  });

  it('lets the page read answers, errors and the rate-limit headers', async () => {
    const headers = { origin: APP, authorization: `Api-Key ${key}` };
    const ok = await on.app.inject({ url: '/api/v1/key/', headers });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(APP);
    const exposed = String(ok.headers['access-control-expose-headers']).split(', ');
    expect(exposed).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id']));
    expect(ok.headers.ratelimit).toBeDefined();

    // A 401 carries the CORS headers too, so the page sees the status instead of a network error.
    const anonymous = await on.app.inject({ url: '/api/v1/key/', headers: { origin: APP } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['access-control-allow-origin']).toBe(APP);

    // So does a 429 with its Retry-After (API_THROTTLE_BURST is 3/min here).
    let last = ok;
    for (let i = 0; i < 4 && last.statusCode !== 429; i++) last = await on.app.inject({ url: '/api/v1/key/', headers });
    expect(last.statusCode).toBe(429);
    expect(last.headers['access-control-allow-origin']).toBe(APP);
    expect(last.headers['retry-after']).toBeDefined();

    // An origin not listed: the answer is the same, without CORS headers (the browser keeps it from the page).
    const other = await on.app.inject({ url: '/api/v1/', headers: { origin: 'https://evil.example' } });
    expect(other.statusCode).toBe(401);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('with *, allows any origin, still without credentials', async () => {
    const pre = await any.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/web/',
      headers: preflight('https://anyone.example'),
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    const get = await any.app.inject({
      url: '/api/v1/key/',
      headers: { origin: 'https://x.example', 'x-api-key': key },
    });
    expect(get.statusCode).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('CORS in a real browser', () => {
  let browser: Browser;
  let allowedPage: Server;
  let otherPage: Server;
  let allowedOrigin: string;
  let otherOrigin: string;
  let sift: TestApp;
  let siftBase: string;

  const servePage = async (): Promise<[Server, string]> => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>front-end</title>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
  };

  beforeAll(async () => {
    [[allowedPage, allowedOrigin], [otherPage, otherOrigin]] = await Promise.all([servePage(), servePage()]);
    sift = await buildTestApp(db, { CORS_ORIGINS: allowedOrigin });
    siftBase = await listen(sift.app);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await sift?.close();
    allowedPage?.close();
    otherPage?.close();
  });

  /** fetch() from a page on `origin`: the status, body and rate-limit header the page can read, or the error. */
  async function fetchFrom(origin: string, path: string, headers: Record<string, string>) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    const result = await page.evaluate(
      async ([url, h]) => {
        try {
          const res = await fetch(url, { headers: h });
          return { status: res.status, body: await res.text(), rateLimit: res.headers.get('RateLimit') };
        } catch (err) {
          return { error: String(err) };
        }
      },
      [`${siftBase}${path}`, headers] as const,
    );
    await context.close();
    return result;
  }

  it('lets a front-end on a listed origin call the API with its key in a header (preflighted)', async () => {
    const res = await fetchFrom(allowedOrigin, '/api/v1/key/', { Authorization: `Api-Key ${key}` });
    expect(res).toMatchObject({ status: 200, rateLimit: expect.stringMatching(/^"(burst|sustained)";r=\d+;t=\d+$/) });
    expect(JSON.parse((res as { body: string }).body)).toMatchObject({ prefix: key.slice(0, 15) });
    const xKey = await fetchFrom(allowedOrigin, '/api/v1/', { 'X-Api-Key': key });
    expect(xKey).toMatchObject({ status: 200 });
  });

  it('blocks a page on any other origin', async () => {
    const res = await fetchFrom(otherOrigin, '/api/v1/key/', { Authorization: `Api-Key ${key}` });
    expect(res).toEqual({ error: expect.stringContaining('Failed to fetch') });
  });
});
