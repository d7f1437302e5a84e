import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH_MESSAGES } from '../../src/mcp/plugin.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * MCP's protocol messages are API requests like any other (issue 66 item 5): each one, batch
 * members included, counts against the key's burst limit; a tool call counts once, as the REST
 * request it runs; a batch has a size cap; every refusal is a JSON-RPC error.
 */

const BURST = 5;
let db: TestDatabase;
let fakes: AllFakes;
let t: TestApp;
let users = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  t = await buildTestApp(db, { ...fakes.env, API_THROTTLE_BURST: `${BURST}/min`, API_THROTTLE_SUSTAINED: '1000/day' });
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

/** A key of its own, so that each test starts with a full window. */
async function freshKey(): Promise<string> {
  return (await createUserWithKey(db.pool, `mcp-limits-${++users}`)).apiKey;
}

async function post(key: string, payload: unknown) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      authorization: `Api-Key ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    payload: JSON.stringify(payload),
  });
  return { status: res.statusCode, headers: res.headers, body: res.json() as unknown };
}

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
const toolCall = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'web_search', arguments: { q: `limits ${id}`, engine: 'provider_02' } },
});

describe('MCP protocol messages', () => {
  it('each count against the burst limit: past it, a 429 JSON-RPC error with the message id and Retry-After', async () => {
    const key = await freshKey();
    const initialize = await post(key, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(initialize.status).toBe(200);
    expect((await post(key, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    for (let id = 2; id < BURST; id++) expect((await post(key, ping(id))).status, `ping ${id}`).toBe(200);
    const refused = await post(key, ping(99));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ jsonrpc: '2.0', id: 99, error: { code: expect.any(Number) } });
    expect((refused.body as { error: { message: string } }).error.message).toMatch(/throttled/i);
    // A notification counts too.
    expect((await post(key, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(429);
  });

  it('count each member of a batch', async () => {
    const key = await freshKey();
    expect((await post(key, [ping(1), ping(2), ping(3)])).status).toBe(200);
    expect((await post(key, [ping(4), ping(5)])).status).toBe(200);
    const refused = await post(key, [ping(6)]);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: expect.any(Number) } });
  });

  it(`refuse a batch of more than ${MAX_BATCH_MESSAGES} messages with a JSON-RPC Invalid Request, counting nothing`, async () => {
    const key = await freshKey();
    const big = Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => ping(i));
    const refused = await post(key, big);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    for (let id = 0; id < BURST; id++) expect((await post(key, ping(id))).status).toBe(200);
  });

  it('count a tool call once, as its REST request, and answer it past the limit as a tool error', async () => {
    const key = await freshKey();
    for (let id = 0; id < BURST; id++) {
      const res = await post(key, toolCall(id));
      expect(res.status).toBe(200);
      expect((res.body as { result: { isError?: boolean } }).result.isError, `call ${id}`).toBeFalsy();
    }
    const refused = await post(key, toolCall(BURST));
    expect((refused.body as { result: { isError?: boolean } }).result.isError).toBe(true);
  });
});
