import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPSTREAM_URL_BYTES, createHttpClient, HttpFailure } from '../../src/upstream/http.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { type TestApp, UNTHROTTLED, buildTestApp, providerStatusRow } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * A caller cannot mark a provider down (issue 66 item 3): what Sift sends is checked first (a
 * language code is a language code, a query fits in an upstream URL), so such values are the
 * caller's 400 with no upstream call; an upstream's 414 or 431 is a refusal of the request, never
 * a provider failure; and the error recorded for a provider never holds the caller's text.
 */

let db: TestDatabase;
let fakes: AllFakes;
let t: TestApp;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  t = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, PROVIDER_SUSPEND_AFTER_FAILURES: '0' });
  ({ apiKey: key } = await createUserWithKey(db.pool, 'poisoner'));
});

afterEach(() => {
  for (const p of fakes.providers) p.server.setMode({ kind: 'normal' });
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

const auth = () => ({ authorization: `Api-Key ${key}` });
const fakeOf = (slug: string) => fakes.providers.find((p) => p.slug === slug)!.server;
const requestsTo = (slug: string) => fakeOf(slug).requests.length;

async function mcpCall(args: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: args } },
  });
  return res.json() as { result: { isError?: boolean; content: { text: string }[] } };
}

describe('a translation language that is no language code', () => {
  it("is the caller's 400 naming the field, with no call to LibreTranslate and nothing recorded", async () => {
    const before = requestsTo('translate');
    const bad = ['x'.repeat(41), 'de"', 'en fr', '../de', 'de\u0000', 'deutsch-sprache-lang-x-y'];
    for (const target of bad) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/translate/',
        headers: { ...auth(), 'content-type': 'application/json' },
        payload: { q: 'hello', target },
      });
      expect(res.statusCode, target).toBe(400);
      expect(Object.keys(res.json()), target).toEqual(['target']);
    }
    const source = await t.app.inject({
      url: `/api/v1/translate/?q=hello&target=de&source=${encodeURIComponent('"><x')}`,
      headers: auth(),
    });
    expect(source.statusCode).toBe(400);
    expect(Object.keys(source.json())).toEqual(['source']);
    expect(requestsTo('translate')).toBe(before);
    expect(await providerStatusRow(t, db, 'translate')).toBeUndefined();
  });

  it('accepts the codes translation backends use', async () => {
    for (const [target, source] of [
      ['de', 'auto'],
      ['pt-BR', 'en'],
      ['zh-Hans', 'AUTO'],
      ['zh_TW', ''],
    ]) {
      const res = await t.app.inject({
        url: `/api/v1/translate/?q=hello&target=${target}${source ? `&source=${source}` : ''}`,
        headers: auth(),
      });
      expect(res.statusCode, `${target} ${source}`).not.toBe(400);
    }
  });
});

describe('a query too long for an upstream URL', () => {
  // 2,000 characters, each 9 bytes once URL-encoded: an 18 KB URL.
  const long = '語'.repeat(2000);

  it("is the caller's 400 over REST, SearXNG POST and MCP, before any upstream call", async () => {
    const before = fakes.providers.map((p) => p.server.requests.length);
    const rest = await t.app.inject({ url: `/api/v1/web/?q=${encodeURIComponent(long)}`, headers: auth() });
    expect(rest.statusCode).toBe(400);
    expect(rest.json()).toEqual({ q: expect.stringMatching(/too long/) });
    const searxng = await t.app.inject({
      method: 'POST',
      url: '/search',
      headers: { ...auth(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ q: long, format: 'json' }).toString(),
    });
    expect(searxng.statusCode).toBe(400);
    const mcp = await mcpCall({ q: long });
    expect(mcp.result.isError).toBe(true);
    expect(mcp.result.content[0]!.text).toMatch(/too long/);
    expect(fakes.providers.map((p) => p.server.requests.length)).toEqual(before);
    for (const slug of ['provider_01', 'provider_02', 'provider_03', 'provider_04']) {
      const row = await providerStatusRow(t, db, slug);
      expect(row?.ok ?? true, slug).toBe(true);
    }
  });

  it('still lets a 2,000-character ASCII query through', async () => {
    const res = await t.app.inject({
      url: `/api/v1/web/?q=${encodeURIComponent('a!'.repeat(1000))}&engine=provider_02`,
      headers: auth(),
    });
    expect(res.statusCode).toBe(200);
  });
});

describe("an upstream's 414 or 431", () => {
  it("is a refusal of the request: the caller's 400, the provider not recorded as failing", async () => {
    for (const status of [414, 431]) {
      fakeOf('provider_02').setMode({ kind: 'status', status, body: 'Request Header Fields Too Large' });
      const res = await t.app.inject({
        url: `/api/v1/web/?q=${encodeURIComponent(`status ${status} query`)}&engine=provider_02`,
        headers: auth(),
      });
      expect(res.statusCode, String(status)).toBe(400);
      expect(Object.keys(res.json())).toEqual(['q']);
    }
    const row = await providerStatusRow(t, db, 'provider_02');
    expect(row?.ok ?? true).toBe(true);
    expect(row?.last_error ?? '').toBe('');
  });
});

describe('the error recorded for a provider', () => {
  it("never holds the caller's text an upstream echoed back", async () => {
    const words = 'my very private medical question';
    fakeOf('provider_03').setMode({ kind: 'status', status: 500, body: { error: `cannot search for "${words}"` } });
    const res = await t.app.inject({
      url: `/api/v1/web/?q=${encodeURIComponent(words)}&engine=provider_03`,
      headers: auth(),
    });
    expect(res.statusCode).toBe(502);
    const row = await providerStatusRow(t, db, 'provider_03');
    expect(row?.ok).toBe(false);
    expect(row!.last_error).toMatch(/^HTTP 500/);
    expect(row!.last_error).not.toContain('private medical');
    const status = await t.app.inject({ url: '/api/v1/status/', headers: auth() });
    expect(status.body).not.toContain('private medical');
  });
});

describe('the HTTP layer', () => {
  it(`refuses to send a URL over ${MAX_UPSTREAM_URL_BYTES} bytes, as a 414 of the request`, async () => {
    const client = createHttpClient({ userAgent: 'test' });
    const fake = fakeOf('provider_02');
    const before = fake.requests.length;
    try {
      const url = `${fake.url}/search?q=${'a'.repeat(MAX_UPSTREAM_URL_BYTES)}`;
      const failure = await client.request({ url, timeoutMs: 2000 }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(HttpFailure);
      expect((failure as HttpFailure).status).toBe(414);
      expect(fake.requests.length).toBe(before);
    } finally {
      await client.close();
    }
  });
});
