import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { buildTestApp, type TestApp, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * The MCP tools called the way agents already call search tools: with the argument names of
 * Brave's and SearXNG's MCP servers (`query`, `count`, `offset`, engine names, `freshness`,
 * `time_range`, `safesearch`), invalid values refused naming the argument, and each result
 * carrying the rate-limit state of the REST request it ran.
 */

let db: TestDatabase;
let fakes: AllFakes;
let t: TestApp;
let base: string;
let key: string;
let userId: number;
let client: Client;
let counter = 0;
const uniq = (q: string) => `${q} alias${++counter}`;

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

const usage = () => searchesCounted(t, db, userId);

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  t = await buildTestApp(db, { ...fakes.env, API_THROTTLE_BURST: '1000/min', API_THROTTLE_SUSTAINED: '100000/day' });
  base = await listen(t.app);
  ({ userId, apiKey: key } = await createUserWithKey(db.pool, 'alias-agent'));
  client = new Client({ name: 'sift-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Api-Key ${key}` } },
    }),
  );
});

afterEach(() => {
  fakes.resetRequests();
});

afterAll(async () => {
  await client?.close();
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe('MCP tool arguments under the names agents use', () => {
  it("web_search takes query, count, offset, engine names and Brave's freshness", async () => {
    const q = uniq('borrow checker');
    const result = await call('web_search', {
      query: q,
      count: 3,
      offset: 1,
      engines: 'brave,mojeek',
      freshness: 'pw',
    });
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent as { query: string; page: number; engine: string[]; results: unknown[] };
    expect(body).toMatchObject({ query: q, page: 2, engine: ['provider_01', 'provider_02'] });
    expect(body.results).toHaveLength(3);
    const [brave] = fakes.web.brave.requests;
    expect(brave!.query.get('freshness')).toBe('pw');
    expect(brave!.query.get('offset')).toBe('1');
    expect(fakes.web.marginalia.requests).toHaveLength(0);
  });

  it("takes SearXNG's time_range, safesearch and language, and engine names in engine itself", async () => {
    const result = await call('news_search', {
      query: uniq('elections'),
      time_range: 'month',
      safesearch: 'off',
      language: 'de',
      engine: 'brave',
    });
    expect(result.isError).toBeFalsy();
    const brave = fakes.web.brave.requests.find((r) => r.path.includes('news'));
    expect(brave!.query.get('freshness')).toBe('pm');
    expect(brave!.query.get('safesearch')).toBe('off');
    expect(brave!.query.get('search_lang')).toBe('de');
  });

  it('geocode takes count as its limit', async () => {
    const result = await call('geocode', { query: 'Berlin', count: 2 });
    expect(result.isError).toBeFalsy();
    expect(fakes.cards.nominatim.requests.at(-1)!.query.get('limit')).toBe('2');
  });

  it('refuses an argument given under its own name and its alias, naming both, counting nothing', async () => {
    const before = await usage();
    const result = await call('web_search', { q: uniq('own name'), query: 'not this', page: 3, offset: 0 });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      'Invalid arguments. query: Give `q` or `query`, not both.; offset: Give `page` or `offset`, not both.',
    );
    expect(await usage()).toBe(before);
  });

  it('refuses invalid values with a message naming the argument, counting nothing', async () => {
    const before = await usage();
    const cases: [Record<string, unknown>, string][] = [
      [
        { q: 'x', date: 'century' },
        'Invalid arguments. date: Must be one of day, week, month, year (also d, w, m, y or pd, pw, pm, py).',
      ],
      [
        { q: 'x', freshness: 'decade' },
        'Invalid arguments. freshness: Must be one of day, week, month, year (also d, w, m, y or pd, pw, pm, py).',
      ],
      [{ q: 'x', count: 0 }, 'Invalid arguments. count: Must be an integer between 1 and 50.'],
      [{ q: 'x', offset: 'two' }, 'Invalid arguments. offset: Must be an integer between 0 and 49.'],
      [{ q: 'x', safesearch: 'maybe' }, 'Invalid arguments. safesearch: Must be off, moderate or strict (or 0, 1, 2).'],
      [{ query: '  ' }, 'Invalid arguments. q: This query parameter is required.'],
    ];
    for (const [args, message] of cases) {
      const result = await call('web_search', args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(text(result)).toBe(message);
    }
    expect(await usage()).toBe(before);
  });

  it('lists the aliases in the input schemas, without requiring q (query will do)', async () => {
    const { tools } = await client.listTools();
    const web = tools.find((tool) => tool.name === 'web_search')!;
    expect(web.inputSchema.required).toBeUndefined();
    expect(web.inputSchema.properties).toMatchObject({
      query: { type: 'string' },
      count: { type: 'integer', minimum: 1, maximum: 50 },
      freshness: { type: 'string' },
      time_range: { type: 'string' },
    });
    const geocode = tools.find((tool) => tool.name === 'geocode')!;
    expect(Object.keys(geocode.inputSchema.properties ?? {})).toEqual([
      'q',
      'limit',
      'lang',
      'query',
      'language',
      'search_lang',
      'count',
    ]);
  });
});

describe('rate-limit state on tool results', () => {
  it("carries the REST request's RateLimit headers in _meta and on the /mcp answer", async () => {
    const result = await call('suggest', { query: uniq('rate') });
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['sift/ratelimit']).toMatch(/^"burst";r=\d+;t=\d+$/);
    expect(result._meta?.['sift/ratelimit-policy']).toMatch(/"burst";q=1000;w=60/);

    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Api-Key ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'suggest', arguments: { query: uniq('rate') } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/^"burst";r=\d+;t=\d+$/);
    expect(res.headers.get('ratelimit-policy')).toBeTruthy();
  });
});
