import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';

/*
 * Slow and idle clients cannot hold the server: a request must arrive within
 * REQUEST_TIMEOUT_SECONDS (else 408 and the connection closed), and a process
 * accepts at most MAX_CONNECTIONS open connections.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

async function withServer(env: Record<string, string>, run: (port: number) => Promise<void>): Promise<void> {
  const t: TestApp = await buildTestApp(db, env);
  try {
    const base = await listen(t.app);
    await run(Number(new URL(base).port));
  } finally {
    await t.close();
  }
}

/** A raw connection: what it received, and a promise of its close. */
function open(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (c) => (data += c));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('slow clients', () => {
  it('answers 408 and closes a connection whose body does not arrive in time', async () => {
    await withServer({ REQUEST_TIMEOUT_SECONDS: '1' }, async (port) => {
      const c = await open(port);
      c.socket.write(
        'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nusername=a',
      );
      const started = performance.now();
      await c.closed;
      const waited = performance.now() - started;
      expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(c.received()).toContain('{"detail":"The request took too long to arrive."}');
      // Cut after the limit: not before it, and not after Node's default of five minutes (past the
      // test's own timeout, which would fail it).
      expect(waited).toBeGreaterThanOrEqual(900);
    });
  });

  it('closes connections past MAX_CONNECTIONS at once, and serves again when one goes', async () => {
    await withServer({ MAX_CONNECTIONS: '2' }, async (port) => {
      const held = [await open(port), await open(port)];
      // Both are counted once the server has accepted them: one request each makes sure.
      for (const c of held) c.socket.write('GET /up HTTP/1.1\r\nHost: x\r\n\r\n');
      await expect.poll(() => held.every((c) => c.received().includes('200 OK')), { timeout: 5000 }).toBe(true);
      const third = await open(port);
      await third.closed;
      expect(third.received()).toBe('');
      held[0]!.socket.destroy();
      await held[0]!.closed;
      await expect
        .poll(
          async () => {
            const next = await open(port);
            next.socket.write('GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
            await next.closed;
            return next.received().startsWith('HTTP/1.1 200');
          },
          { timeout: 5000 },
        )
        .toBe(true);
      held[1]!.socket.destroy();
    });
  });
});
