import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { createTurnBatch } from '../../src/turn-batch.js';
import { testConfig } from '../helpers/app.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('work deferred to the end of the turn (turn-batch.ts)', () => {
  it('runs what one turn deferred together after that turn, in the order deferred', async () => {
    const atTurnEnd = createTurnBatch((err) => {
      throw err;
    });
    const order: string[] = [];
    atTurnEnd(() => order.push('a'));
    await Promise.resolve(); // a microtask of the same turn
    atTurnEnd(() => order.push('b'));
    order.push('rest of the turn');
    expect(order).toEqual(['rest of the turn']);
    await nextTurn();
    expect(order).toEqual(['rest of the turn', 'a', 'b']);
  });

  it('puts what is deferred while a batch runs into the next turn, not the running batch', async () => {
    const atTurnEnd = createTurnBatch((err) => {
      throw err;
    });
    const order: string[] = [];
    atTurnEnd(() => {
      order.push('a');
      setImmediate(() => order.push('next turn begins'));
      atTurnEnd(() => order.push('c'));
    });
    atTurnEnd(() => order.push('b'));
    await nextTurn();
    await nextTurn();
    await nextTurn();
    expect(order).toEqual(['a', 'b', 'next turn begins', 'c']);
  });

  it('hands what a deferred function throws to onError and still runs the rest of the batch', async () => {
    const errors: unknown[] = [];
    const atTurnEnd = createTurnBatch((err) => errors.push(err));
    const ran: string[] = [];
    atTurnEnd(() => {
      throw new Error('first fails');
    });
    atTurnEnd(() => ran.push('second'));
    await nextTurn();
    expect(ran).toEqual(['second']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['first fails']);
  });
});

describe('responses written at the end of the turn', () => {
  it('gives each of many concurrent requests its own complete response', async () => {
    const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const app = await buildApp(testConfig(null), { pool, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // Unknown paths answer 404 without the database; each echoes its own request id.
    const answers = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const res = await fetch(`${base}/no/such/page/${i}`, { headers: { 'x-request-id': `req-${i}` } });
        return { i, status: res.status, id: res.headers.get('x-request-id'), body: await res.json() };
      }),
    );
    for (const a of answers) {
      expect(a.status).toBe(404);
      expect(a.id).toBe(`req-${a.i}`);
      expect(a.body).toEqual({ detail: 'Not found.' });
    }
    await app.close();
    await pool.end();
  });

  it('answers a send that fails once deferred (a header node refuses) with a JSON 500, not a hang', async () => {
    const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const app = await buildApp(testConfig(null), { pool, logger: false });
    // A route of this test only: a header value with a line break, which node's writeHead throws on.
    app.get('/test/bad-header', async (_request, reply) => {
      reply.header('X-Broken', 'a\r\nb');
      return { ok: true };
    });
    const res = await app.inject({ url: '/test/bad-header' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ statusCode: 500 });
    expect(res.headers['x-broken']).toBeUndefined();
    await app.close();
    await pool.end();
  });
});
