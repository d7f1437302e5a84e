import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { type TestApp, UNTHROTTLED, buildTestApp } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * What API answers tell caches and clients (issue 66 item 6): no shared cache keeps an answer,
 * the index never repeats a Host the request claimed, the health endpoints read `bearer` in any
 * case, and a 401 of the SearXNG-compatible API offers HTTP Basic, which it accepts.
 */

let db: TestDatabase;
let fakes: AllFakes;
let t: TestApp;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  t = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, STATUS_MONITOR_TOKEN: 'monitor-token-1234' });
  ({ apiKey: key } = await createUserWithKey(db.pool, 'answers'));
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

const get = (url: string, headers: Record<string, string> = {}, on: TestApp = t) =>
  on.app.inject({ method: 'GET', url, headers });

describe('Cache-Control on API answers', () => {
  it('is no-store on REST, SearXNG and MCP answers, successes and refusals alike', async () => {
    const auth = { authorization: `Api-Key ${key}` };
    const answers = [
      await get('/api/v1/web/?q=cache', auth),
      await get('/api/v1/', auth),
      await get('/api/v1/web/?q=cache'),
      await get(`/searxng/${key}/search?q=cache&format=json`),
      await get('/searxng/svc_sk_00000000.wrong/search?q=cache&format=json'),
      await get('/search?q=cache&format=json', auth),
      await get('/config', auth),
      await t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'ping' },
      }),
      await get('/api/v1/no-such-endpoint/', auth),
    ];
    for (const res of answers) {
      expect(res.headers['cache-control'], `${res.statusCode} ${res.body.slice(0, 60)}`).toBe('no-store');
    }
    expect(answers[0]!.statusCode).toBe(200);
    expect(answers[3]!.statusCode).toBe(200);
  });
});

describe('the API index', () => {
  it('never repeats the Host a request claimed', async () => {
    const res = await get('/api/v1/', { authorization: `Api-Key ${key}`, host: 'attacker.example:8443' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, string>;
    expect(res.body).not.toContain('attacker.example');
    // The address it listens on (HOST, 127.0.0.1 by default), never the Host the request claimed.
    expect(body.web_search).toBe(`http://${t.config.HOST}:${t.config.PORT}/api/v1/web/`);
  });

  it('builds every URL from PUBLIC_URL when it is set', async () => {
    const other = await buildTestApp(db, { ...UNTHROTTLED, PUBLIC_URL: 'https://search.example.org/sift/' });
    try {
      const res = await get('/api/v1/', { authorization: `Api-Key ${key}`, host: 'attacker.example' }, other);
      const body = res.json() as Record<string, string>;
      expect(body.web_search).toBe('https://search.example.org/sift/api/v1/web/');
      expect(body.key).toBe('https://search.example.org/sift/api/v1/key/');
      expect(res.body).not.toContain('attacker.example');
    } finally {
      await other.close();
    }
  });
});

describe('the health endpoints', () => {
  it('accept the monitor token as a bearer token whatever the case of the scheme', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const res = await get('/status/health/weather', { authorization: `${scheme} monitor-token-1234` });
      expect(res.statusCode, scheme).not.toBe(403);
    }
    expect((await get('/status/health/weather', { authorization: 'bearer wrong-token' })).statusCode).toBe(403);
    expect((await get('/status/health/weather', { authorization: 'Basic monitor-token-1234' })).statusCode).toBe(403);
  });
});

describe('a 401 of the SearXNG-compatible API', () => {
  it('offers HTTP Basic, with the key as the password, at the root and under /searxng/<key>/', async () => {
    for (const url of ['/search?q=a&format=json', '/config', '/searxng/svc_sk_00000000.nope/search?q=a']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(401);
      const challenges = [res.headers['www-authenticate']].flat().join(', ');
      expect(challenges, url).toMatch(/^Basic realm="Sift"/);
    }
    const basic = `Basic ${Buffer.from(`searxng:${key}`).toString('base64')}`;
    expect((await get('/search?q=a&format=json', { authorization: basic })).statusCode).toBe(200);
  });

  it('stays Api-Key on the REST API, which takes no Basic credentials', async () => {
    const res = await get('/api/v1/web/?q=a');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Api-Key');
  });
});
