import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { redactUrl } from '../../src/runtime/logging.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { captureLogs, type LogCapture, type RunningApp, startApp } from '../security/support.js';

/*
 * The SearXNG-compatible API behind the API gate, over real HTTP: every way its clients can send
 * a key (headers, HTTP Basic auth, the base URL), the same limits, quota and usage as /api/v1/,
 * and a key in the URL kept out of log lines, metric labels and error bodies.
 */

let db: TestDatabase;
let fakes: AllFakes;
let app: RunningApp;
let logs: LogCapture;
let key: string;
let userId: number;

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function get(path: string, headers: Record<string, string> = {}, on: RunningApp = app) {
  const res = await fetch(`${on.base}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Record<string, unknown> };
}

async function usage(on: RunningApp = app, user = userId): Promise<number> {
  await on.app.lifecycle.flush();
  return monthlySearches(db.pool, user);
}

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  logs = captureLogs({}, { LOG_QUERIES: true });
  app = await startApp(
    db,
    { ...fakes.env, METRICS_ENABLED: 'true', API_THROTTLE_BURST: '1000/min', API_THROTTLE_SUSTAINED: '100000/day' },
    logs.logger,
  );
  ({ userId, apiKey: key } = await createUserWithKey(db.pool, 'webui'));
});

afterAll(async () => {
  await app?.close();
  await fakes?.close();
  await db?.drop();
});

describe('authentication', () => {
  it('refuses every path without a key with a 401 JSON error', async () => {
    for (const path of ['/search?q=a&format=json', '/config', '/autocompleter?q=a']) {
      const res = await get(path);
      expect(res.status, path).toBe(401);
      // SearXNG's error shape, as its other errors have it.
      expect(res.body).toEqual({
        error: 'Authentication credentials were not provided.',
        detail: 'Authentication credentials were not provided.',
      });
    }
  });

  it('accepts the key in the headers Sift reads, as HTTP Basic credentials and in the base URL', async () => {
    const ways: [string, Record<string, string>][] = [
      ['/search', { 'x-api-key': key }],
      ['/search', { authorization: `Api-Key ${key}` }],
      ['/search', { authorization: `Bearer ${key}` }],
      ['/search', { authorization: basic('searxng', key) }],
      ['/search', { authorization: basic(key, '') }],
      [`/searxng/${key}/search`, {}],
    ];
    for (const [path, headers] of ways) {
      const res = await get(
        `${path}?q=auth+${encodeURIComponent(JSON.stringify(headers).slice(0, 12))}&format=json`,
        headers,
      );
      expect(res.status, `${path} ${Object.keys(headers).join()}`).toBe(200);
    }
    expect((await get(`/searxng/${key}/config`)).status).toBe(200);
    expect((await get(`/searxng/${key}/autocompleter?q=ru`)).status).toBe(200);
  });

  it('refuses a wrong key in the URL or in Basic auth with a 401 that does not repeat it', async () => {
    const wrong = `${key.slice(0, -4)}XXXX`;
    for (const [path, headers] of [
      [`/searxng/${wrong}/search?q=a`, {}],
      ['/search?q=a', { authorization: basic('u', wrong) }],
    ] as [string, Record<string, string>][]) {
      const res = await get(path, headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid or revoked API key.', detail: 'Invalid or revoked API key.' });
      expect(res.text).not.toContain(wrong.slice(-20));
    }
  });
});

describe('limits, quota and usage', () => {
  it('counts a /search as REST counts the same searches, one per /autocompleter, none for /config or a 400', async () => {
    const before = await usage();
    // Four web engines (general) and one each for images and news.
    await get(`/searxng/${key}/search?q=usage+one&format=json&categories=general,images,news`);
    expect(await usage()).toBe(before + 6);
    await get(`/searxng/${key}/autocompleter?q=usage`);
    expect(await usage()).toBe(before + 7);
    await get(`/searxng/${key}/config`);
    await get(`/searxng/${key}/search?q=usage&format=html`);
    expect(await usage()).toBe(before + 7);
  });

  it('spends the same usage for the same search through either door (GET /api/v1/key/)', async () => {
    const used = async () => {
      const res = await get('/api/v1/key/', { 'x-api-key': key });
      return (res.body.usage as { searches: number }).searches;
    };
    const pairs: [string, string[]][] = [
      // SearXNG search -> the REST searches it stands for.
      ['q=door+web&engines=brave,mojeek', ['/api/v1/web/?q=door+web&engine=provider_01,provider_02']],
      ['q=door+all', ['/api/v1/web/?q=door+all']],
      [
        'q=door+media&categories=images,news,videos',
        ['/api/v1/images/?q=door+media', '/api/v1/news/?q=door+media', '/api/v1/videos/?q=door+media'],
      ],
      [
        'q=door+mix&categories=videos&engines=marginalia',
        ['/api/v1/web/?q=door+mix&engine=provider_03', '/api/v1/videos/?q=door+mix'],
      ],
    ];
    for (const [searx, rest] of pairs) {
      const start = await used();
      expect((await get(`/search?${searx}&format=json`, { 'x-api-key': key })).status, searx).toBe(200);
      await app.app.lifecycle.flush();
      const bySearx = (await used()) - start;
      for (const path of rest) expect((await get(path, { 'x-api-key': key })).status, path).toBe(200);
      await app.app.lifecycle.flush();
      const byRest = (await used()) - start - bySearx;
      expect(bySearx, searx).toBe(byRest);
      expect(bySearx, searx).toBeGreaterThan(0);
    }
  });

  it('reserves the most a search counts for a POST with a body, and keeps only what it asked', async () => {
    const before = await usage();
    const res = await fetch(`${app.base}/search`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ q: 'posted form', format: 'json', engines: 'mojeek' }),
    });
    expect(res.status).toBe(200);
    expect(await usage()).toBe(before + 1);
  });

  it('sends the RateLimit headers the REST API sends', async () => {
    const res = await get('/search?q=rate+headers&format=json', { 'x-api-key': key });
    expect(res.headers.get('ratelimit-policy')).toBeTruthy();
    expect(res.headers.get('ratelimit')).toMatch(/^"burst";r=\d+;t=\d+$/);
  });

  it('refuses a search past the monthly quota with 429 and Retry-After', async () => {
    const quota = await startApp(db, { ...fakes.env, API_MONTHLY_QUOTA: '4' });
    try {
      const user = await createUser(db.pool, { username: 'quota-searxng' });
      const own = (await issueApiKey(db.pool, user.id)).key;
      expect((await get(`/searxng/${own}/search?q=quota+one`, {}, quota)).status).toBe(200);
      const refused = await get(`/searxng/${own}/search?q=quota+two`, {}, quota);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(String(refused.body.detail)).toMatch(/^Monthly search quota exhausted/);
      expect(refused.body.error).toBe(refused.body.detail);
      expect(await usage(quota, user.id)).toBe(4);
    } finally {
      await quota.close();
    }
  });
});

describe('a key in the URL', () => {
  it('is redacted from the URL of every log line, with or without a path or query after it', () => {
    const queries = { queries: true };
    expect(redactUrl('/searxng/svc_sk_ab.cd/search?q=a', queries)).toBe('/searxng/[redacted]/search?q=a');
    expect(redactUrl('/searxng/svc_sk_ab.cd')).toBe('/searxng/[redacted]');
    expect(redactUrl('/searxng/svc_sk_ab.cd?q=a&token=t', queries)).toBe('/searxng/[redacted]?q=a&token=[redacted]');
    expect(redactUrl('/search?q=searxng', queries)).toBe('/search?q=searxng');
    expect(redactUrl('/searxng/svc_sk_ab.cd/search?q=a')).toBe('/searxng/[redacted]/search');
  });

  it('never reaches a log line, a metric label or an error body', async () => {
    const wrong = `${key.slice(0, -4)}YYYY`;
    await get(`/searxng/${key}/search?q=logged&format=json`);
    await get(`/searxng/${wrong}/search?q=logged`);
    await get(`/searxng/${key}/nothing-here`);
    await get(`/searxng/${key}/search?format=html&q=x`);
    const secret = key.split('.')[1]!;
    // Nor the links of an RSS answer (its channel links the root's /search).
    const rss = await fetch(`${app.base}/searxng/${key}/search?format=rss&q=feed`).then((r) => r.text());
    expect(rss).toContain('<rss version="2.0"');
    expect(rss).not.toContain(secret);
    const metrics = await fetch(`${app.base}/metrics`).then((r) => r.text());
    expect(metrics).toContain('route="/searxng/:key/search"');
    expect(metrics).not.toContain(secret);
    expect(logs.text()).toContain('/searxng/[redacted]/search?q=logged');
    expect(logs.text()).not.toContain(secret);
    expect(logs.text()).not.toContain(wrong.split('.')[1]!);
  });

  it('is turned off by SEARXNG_KEY_IN_URL_ENABLED=false: a 404 saying so, the root API still served', async () => {
    const off = await startApp(db, { ...fakes.env, SEARXNG_KEY_IN_URL_ENABLED: 'false' });
    try {
      const res = await get(`/searxng/${key}/search?q=off`, {}, off);
      expect(res.status).toBe(404);
      expect(String(res.body.detail)).toContain('SEARXNG_KEY_IN_URL_ENABLED=false');
      expect(res.text).not.toContain(key);
      expect((await get('/search?q=off&format=json', { 'x-api-key': key }, off)).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
