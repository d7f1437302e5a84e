import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { UNTHROTTLED } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { rawRequest } from '../helpers/raw-http.js';
import { captureLogs, startApp } from './support.js';

/*
 * What people search for stays out of the logs (LOG_QUERIES off, the default), and an API key never
 * reaches them, whatever the log level and however the URL that carries it is spelt: real requests
 * over HTTP (raw sockets for the targets fetch would normalise), every line the app writes scanned.
 */

const QUERY_WORD = 'zebrafishsecretquery';
const LEVELS = ['trace', 'debug', 'info', 'warn'] as const;

let db: TestDatabase;
let fakes: AllFakes;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  ({ apiKey: key } = await createUserWithKey(db.pool, 'private'));
  // An article named as the query (a title, as Wikipedia writes them, with a capital).
  fakes.cards.wikipedia.addPage({ title: `Z${QUERY_WORD.slice(1)} medical`, extract: 'An article.' });
});

afterAll(async () => {
  await fakes?.close();
  await db?.drop();
});

/** Every kind of request that carries query text or a key, sent to `base`. */
async function sendEverything(base: string): Promise<void> {
  const auth = { authorization: `Api-Key ${key}` };
  const q = encodeURIComponent(`${QUERY_WORD} medical`);
  // Upstream failures are logged (at warn): with the caller's text in the URL's path (an article
  // title) and echoed in the error body.
  const wikipedia = fakes.providers.find((p) => p.slug === 'provider_08')!.server;
  const echo = { kind: 'status' as const, status: 500, body: { error: `no results for ${QUERY_WORD} medical` } };
  wikipedia.setMode(echo, '/en/api/rest_v1/page/summary/');
  fakes.providers.find((p) => p.slug === 'provider_03')!.server.setMode(echo);
  await (await fetch(`${base}/api/v1/cards/?q=${q}`, { headers: auth })).text();
  await (await fetch(`${base}/api/v1/web/?q=${q}&engine=provider_03`, { headers: auth })).text();
  for (const p of fakes.providers) p.server.setMode({ kind: 'normal' });
  for (const path of ['web/', 'images/', 'news/', 'videos/', 'suggest/', 'instant/', 'cards/', 'maps/']) {
    await (await fetch(`${base}/api/v1/${path}?q=${q}`, { headers: auth })).text();
  }
  await (await fetch(`${base}/api/v1/translate/?q=${q}&target=de`, { headers: auth })).text();
  await (
    await fetch(`${base}/api/v1/translate/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: `q=${q}&target=${QUERY_WORD}`,
    })
  ).text();
  // A refused parameter and an unknown path, with the query text in them.
  await (await fetch(`${base}/api/v1/web/?q=${q}&page=${QUERY_WORD}`, { headers: auth })).text();
  await (await fetch(`${base}/api/v1/nowhere/?q=${q}`, { headers: auth })).text();
  // SearXNG: the key in the base URL, the query in the URL and in a POST body.
  await (await fetch(`${base}/searxng/${key}/search?q=${q}&format=json`)).text();
  await (
    await fetch(`${base}/searxng/${key}/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `q=${q}&format=json`,
    })
  ).text();
  // MCP: a tool call with the query in its arguments.
  await (
    await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'web_search', arguments: { q: `${QUERY_WORD} medical` } },
      }),
    })
  ).text();
  // The key in URL forms a client can send but that are not literally /searxng/<key>/.
  const { host } = new URL(base);
  for (const target of [
    `http://${host}/searxng/${key}/search?q=${q}&format=json`,
    `/%73earxng/${key}/search?q=${q}&format=json`,
    `//searxng/${key}/search?q=${q}`,
    `/SEARXNG/${key}/search?q=${q}`,
    `/x/../searxng/${key}/search?q=${q}`,
    `/searxng/./${key}/search?q=${q}`,
    `/api/v1/web/?q=${q}&key=${key}`,
  ]) {
    await rawRequest(base, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  }
}

describe('the log at every level', () => {
  for (const level of LEVELS) {
    it(`holds neither query text nor an API key at LOG_LEVEL=${level}`, async () => {
      const logs = captureLogs({}, { LOG_LEVEL: level });
      // One key for every level: unthrottled, so that no level's requests are refused by the earlier ones'.
      const env = { ...fakes.env, ...UNTHROTTLED, LOG_LEVEL: level, METRICS_ENABLED: 'true' };
      const app = await startApp(db, env, logs.logger);
      try {
        await sendEverything(app.base);
        await app.app.lifecycle.flush();
      } finally {
        await app.close();
      }
      const text = logs.text();
      if (level !== 'warn') expect(text).toContain('"url":"/api/v1/web/"');
      // The failures were logged, without the text.
      expect(text).toContain('upstream call failed');
      expect(text.toLowerCase()).not.toContain(QUERY_WORD);
      expect(text).not.toContain(key.split('.')[1]!);
      expect(text).not.toContain(key.split('.')[0]!);
    });
  }

  it('holds the query text with LOG_QUERIES=true, and still no key', async () => {
    const logs = captureLogs({}, { LOG_LEVEL: 'info', LOG_QUERIES: true });
    const app = await startApp(db, { ...fakes.env, LOG_LEVEL: 'info', LOG_QUERIES: 'true' }, logs.logger);
    try {
      await sendEverything(app.base);
    } finally {
      await app.close();
    }
    const text = logs.text();
    expect(text).toContain(QUERY_WORD);
    expect(text).not.toContain(key.split('.')[1]!);
  });
});
