import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser, setUserActive } from '../../src/auth/users.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { TOOL_DEFINITIONS } from '../../src/mcp/tools.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { buildTestApp, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * /mcp driven end to end by the SDK's own client over Streamable HTTP, on the
 * real app (listening), with the web engines faked: the tools, their schemas,
 * structured output equal to the REST body, errors as tool results, and the
 * same keys, limits and usage as the REST endpoints.
 */

let db: TestDatabase;
let fakes: WebFakes;
let t: TestApp;
let base: string;
let apiKey: string;
let userId: number;
let counter = 0;
const uniq = (q: string) => `${q} mcp${++counter}`;

async function connect(key: string | null, url = base, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'sift-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: key === null ? headers : { Authorization: `Api-Key ${key}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

async function rest(path: string, key = apiKey) {
  const res = await fetch(`${base}${path}`, { headers: { Authorization: `Api-Key ${key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function usage(app: TestApp = t, user = userId): Promise<number> {
  await app.app.lifecycle.flush();
  return monthlySearches(db.pool, user);
}

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  // Nominatim is keyless: pointed at a closed port, it fails at once (reverse geocoding falls back to the coordinates).
  t = await buildTestApp(db, {
    ...fakes.env,
    ...UNTHROTTLED,
    PROVIDER_TIMEOUT_MS: '700',
    NOMINATIM_BASE_URL: 'http://127.0.0.1:9',
  });
  base = await listen(t.app);
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'agent'));
});

afterEach(() => {
  for (const f of [fakes.brave, fakes.mojeek, fakes.marginalia, fakes.staan]) f.setMode({ kind: 'normal' });
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe('MCP: connecting', () => {
  it('initializes with the SDK client and lists the twelve tools with their schemas', async () => {
    const client = await connect(apiKey);
    expect(client.getServerVersion()?.name).toBe('sift');
    expect(client.getInstructions()).toContain('failed providers');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'web_search',
      'read_page',
      'image_search',
      'news_search',
      'video_search',
      'suggest',
      'geocode',
      'reverse_geocode',
      'translate',
      'instant_answer',
      'knowledge_cards',
      'provider_status',
    ]);
    const web = tools.find((tool) => tool.name === 'web_search')!;
    // `q` may come as `query`: the endpoint says when neither is given.
    expect(web.inputSchema.required).toBeUndefined();
    expect(Object.keys(web.inputSchema.properties ?? {})).toEqual([
      'q',
      'engine',
      'safe',
      'lang',
      'page',
      'date',
      'contents',
      ...['query', 'engines', 'offset', 'pageno', 'freshness', 'time_range', 'safesearch', 'language', 'search_lang'],
      'count',
    ]);
    expect(web.outputSchema?.type).toBe('object');
    expect(web.annotations?.readOnlyHint).toBe(true);
    const reverse = tools.find((tool) => tool.name === 'reverse_geocode')!;
    expect(reverse.inputSchema.required).toEqual(['lat', 'lon']);
    expect(Object.keys(reverse.inputSchema.properties ?? {})).toEqual([
      'lat',
      'lon',
      'label',
      'lang',
      'language',
      'search_lang',
    ]);
    const translate = tools.find((tool) => tool.name === 'translate')!;
    expect(translate.inputSchema.required).toEqual(['target']);
    await client.close();
  });

  it('takes its input schemas from the same zod schemas as the REST endpoints (the OpenAPI parameters)', async () => {
    const doc = (await rest('/api/v1/schema/')).body as {
      paths: Record<string, { get?: { parameters?: { name: string }[] } }>;
    };
    for (const tool of TOOL_DEFINITIONS) {
      // The document lists each path without its trailing slash.
      const params = (doc.paths[tool.path.slice(0, -1)]?.get?.parameters ?? []).map((p) => p.name);
      const client = tool.only ?? Object.keys(tool.fields.shape);
      for (const name of client) expect(params, `${tool.name}: ${name}`).toContain(name);
    }
  });

  it("refuses a request without a key, a bad key and a disabled account with /api/v1/'s statuses", async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Api-Key');
    // The 401 says how to send the key, so that a client does not take it for an OAuth challenge.
    const howTo = 'Send a Sift API key in the request headers: "Authorization: Api-Key svc_sk_…"';
    const noneBody = (await none.json()) as { detail: string; error: { message: string } };
    expect(noneBody.detail).toMatch(/^Authentication credentials were not provided\. /);
    expect(noneBody.detail).toContain(howTo);
    expect(noneBody.detail).toContain('this server does not use OAuth');
    expect(noneBody.error.message).toBe(noneBody.detail);

    const bad = await post({ authorization: 'Bearer svc_sk_nope.nope' });
    expect(bad.status).toBe(401);
    const badBody = (await bad.json()) as { detail: string };
    expect(badBody.detail).toMatch(/^Invalid or revoked API key\. /);
    expect(badBody.detail).toContain(howTo);

    const other = await createUser(db.pool, { username: 'disabled-agent' });
    const otherKey = (await issueApiKey(db.pool, other.id)).key;
    await setUserActive(db.pool, other.id, false);
    const disabled = await post({ 'x-api-key': otherKey });
    expect(disabled.status).toBe(403);
    expect(await disabled.json()).toEqual({ detail: 'User account is disabled.' });

    // Every header form the API takes works here too.
    const forms: Record<string, string>[] = [{ authorization: `Bearer ${apiKey}` }, { 'x-api-key': apiKey }];
    for (const headers of forms) {
      const ok = await post(headers);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe('sift');
    }

    await expect(connect(null)).rejects.toThrow();
  });

  it('answers GET and DELETE with 405 (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { authorization: `Api-Key ${apiKey}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ detail: `Method "${method}" not allowed.`, error: { code: -32000 } });
    }
  });

  it('answers a malformed JSON-RPC body with a JSON-RPC parse error', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Api-Key ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{nope',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32700 }, detail: 'Parse error: Invalid JSON' });
    // No Accept for JSON and SSE: 406, in both forms too.
    const plain = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Api-Key ${apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(plain.status).toBe(406);
    expect(((await plain.json()) as { detail: string }).detail).toMatch(/^Not Acceptable/);
  });
});

describe('MCP: tool calls are their REST requests', () => {
  it('web_search: structured output equal to the REST body, a text listing, the same usage units', async () => {
    const client = await connect(apiKey);
    const q = uniq('rust borrow checker');
    const before = await usage();
    const result = await call(client, 'web_search', { q, engine: 'provider_01,provider_02' });
    expect(result.isError).toBeFalsy();
    expect(await usage()).toBe(before + 2);

    const restAnswer = await rest(`/api/v1/web/?${new URLSearchParams({ q, engine: 'provider_01,provider_02' })}`);
    expect(restAnswer.status).toBe(200);
    expect(result.structuredContent).toEqual(restAnswer.body);
    const body = result.structuredContent as { results: { title: string; url: string }[] };
    expect(body.results.length).toBeGreaterThan(0);
    expect(text(result)).toContain(`Web results for "${q}"`);
    expect(text(result)).toContain(body.results[0]!.url);
    expect(text(result)).not.toContain('failed');
    await client.close();
  });

  it('accepts numbers and lists where the query string has text (page, engine)', async () => {
    const client = await connect(apiKey);
    const q = uniq('paging');
    const result = await call(client, 'web_search', { q, page: 2, engine: ['provider_03'] });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ page: 2, engine: ['provider_03'] });
    await client.close();
  });

  it("invalid arguments: a tool error with the endpoint's own messages, nothing counted", async () => {
    const client = await connect(apiKey);
    const before = await usage();
    const result = await call(client, 'web_search', { q: '  ', engine: 'bing' });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'Invalid arguments. q: This query parameter is required.; engine: Unknown engine(s): bing. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").',
    );
    expect(result.structuredContent).toBeUndefined();
    expect(await usage()).toBe(before);
    await client.close();
  });

  it('some providers failed: results with a plain statement of which ones', async () => {
    fakes.mojeek.setMode({ kind: 'status', status: 500 });
    const client = await connect(apiKey);
    const result = await call(client, 'web_search', { q: uniq('partial'), engine: 'provider_01,provider_02' });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { unresponsive: unknown[] }).unresponsive).toEqual([
      { engine: 'provider_02', reason: 'error' },
    ]);
    expect(text(result)).toContain('Some providers failed, so results may be incomplete: provider_02 (Mojeek): error.');
    await client.close();
  });

  it('every provider failed (502): a tool error naming them, not an empty result', async () => {
    for (const f of [fakes.brave, fakes.mojeek]) f.setMode({ kind: 'status', status: 500 });
    const client = await connect(apiKey);
    const before = await usage();
    const result = await call(client, 'web_search', { q: uniq('outage'), engine: 'provider_01,provider_02' });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'All search providers failed. Failed providers: provider_01 (Brave Search): error; provider_02 (Mojeek): error. No results were returned.',
    );
    expect(await usage()).toBe(before);
    await client.close();
  });

  it('nothing configured (503): a tool error saying what is missing', async () => {
    const client = await connect(apiKey);
    const news = await call(client, 'news_search', { q: uniq('news'), engine: 'provider_02' });
    expect(news.isError).toBe(true);
    expect(text(news)).toMatch(/^No news search provider in the request/);
    const translate = await call(client, 'translate', { q: 'bonjour', target: 'en' });
    expect(translate.isError).toBe(true);
    expect(text(translate)).toBe('Translation is unavailable or not configured on this deployment.');
    await client.close();
  });

  it('reverse_geocode, suggest, instant_answer and provider_status answer like their endpoints', async () => {
    const client = await connect(apiKey);
    const reverse = await call(client, 'reverse_geocode', { lat: 48.8584, lon: '2.2945', label: 'Tour Eiffel' });
    expect(reverse.isError).toBeFalsy();
    expect(reverse.structuredContent).toEqual(
      (await rest('/api/v1/maps/?lat=48.8584&lon=2.2945&label=Tour%20Eiffel')).body,
    );
    expect(text(reverse)).toContain('lat 48.8584, lon 2.2945');

    const suggest = await call(client, 'suggest', { q: 'rus' });
    expect(suggest.isError).toBeFalsy();
    expect(suggest.structuredContent).toEqual((await rest('/api/v1/suggest/?q=rus')).body);

    const instant = await call(client, 'instant_answer', { q: '2+2*3' });
    expect(instant.isError).toBeFalsy();
    expect(instant.structuredContent).toMatchObject({ query: '2+2*3', answer: { type: 'math' } });
    expect(text(instant)).toContain('Instant answer (math)');
    // Readable text, not the answer's JSON (that is in structuredContent).
    expect(text(instant)).toContain('2+2*3 = 8');
    expect(text(instant)).not.toContain('{');

    await t.app.health.recorder.flush();
    const status = await call(client, 'provider_status', {});
    expect(status.isError).toBeFalsy();
    expect(status.structuredContent).toEqual((await rest('/api/v1/status/')).body);
    expect(text(status)).toMatch(/^Providers: \d+ up, \d+ down, \d+ not yet observed\./);
    await client.close();
  });

  it('an unknown tool is a protocol error that says so once', async () => {
    const client = await connect(apiKey);
    const error = await call(client, 'no_such_tool', {}).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toBe('MCP error -32602: Unknown tool: no_such_tool');
    expect((error as { code?: number } | null)?.code).toBe(-32602);
    await client.close();
  });
});

describe('MCP: rate limits and quota', () => {
  let limited: TestApp;
  let limitedBase: string;
  let key: string;
  let limitedUser: number;

  beforeAll(async () => {
    limited = await buildTestApp(db, { ...fakes.env, API_THROTTLE_BURST: '8/min', API_MONTHLY_QUOTA: '1000' });
    limitedBase = await listen(limited.app);
    ({ userId: limitedUser, apiKey: key } = await createUserWithKey(db.pool, 'limited-agent'));
  });
  afterAll(async () => {
    await limited?.close();
  });

  it("each tool call and each protocol message takes one request of the key's limits", async () => {
    // Connecting takes two (initialize, notifications/initialized), listing one: 5 of 8 left.
    const client = await connect(key, limitedBase);
    await client.listTools();
    const results: CallToolResult[] = [];
    for (let i = 0; i < 6; i++) results.push(await call(client, 'suggest', { q: uniq('limit') }));
    expect(results.slice(0, 5).map((r) => r.isError ?? false)).toEqual([false, false, false, false, false]);
    expect(results[5]!.isError).toBe(true);
    expect(text(results[5]!)).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
    // Five searches counted: the refused call counted nothing.
    expect(await usage(limited, limitedUser)).toBe(5);
    // The REST API sees the same exhausted key.
    const res = await fetch(`${limitedBase}/api/v1/suggest/?q=x`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(429);
    // A protocol message is refused too, as a JSON-RPC error the client reports.
    await expect(client.listTools()).rejects.toThrow(/throttled/);
    await client.close();
  });
});
