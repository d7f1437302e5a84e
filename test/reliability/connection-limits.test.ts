import { type Socket, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionReserve } from '../../src/runtime/connections.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { statusOf } from '../helpers/raw-http.js';
import { freePort, listen, spawnServerProcess } from '../helpers/server.js';

/*
 * One client cannot take a server process's connections (issue 66 item 1), over raw sockets
 * against a listening server: a connection that sends nothing is closed after
 * FIRST_BYTE_TIMEOUT_MS; one address holds at most MAX_CONNECTIONS_PER_CLIENT (a trusted proxy
 * excepted); past MAX_CONNECTIONS a reserve still answers /up and the health checks.
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

interface Raw {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
}

/** A raw connection from `from` (a loopback address: each is a different client). */
function open(port: number, from = '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    let data = '';
    socket.on('data', (c) => (data += c.toString('latin1')));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Sends one request on `c` and waits for its whole answer (the text after `from`). */
async function ask(c: Raw, request: string): Promise<string> {
  const from = c.received().length;
  c.socket.write(request);
  await expect.poll(() => /\r\n\r\n/.test(c.received().slice(from)), { timeout: 10_000 }).toBe(true);
  return c.received().slice(from);
}

const GET = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: sift.test\r\n${extra}\r\n`;

describe('a connection that sends nothing', () => {
  it('is closed after FIRST_BYTE_TIMEOUT_MS, with nothing written', async () => {
    await withServer({ FIRST_BYTE_TIMEOUT_MS: '300' }, async (port) => {
      const idle = await open(port);
      await idle.closed;
      expect(idle.received()).toBe('');
    });
  });

  it('is not cut once it has sent a request: it stays open between requests as keep-alive allows', async () => {
    await withServer({ FIRST_BYTE_TIMEOUT_MS: '300' }, async (port) => {
      const c = await open(port);
      expect(statusOf(await ask(c, GET('/up')))).toBe(200);
      await new Promise((r) => setTimeout(r, 900));
      expect(c.socket.destroyed).toBe(false);
      expect(statusOf(await ask(c, GET('/up')))).toBe(200);
      c.socket.destroy();
    });
  });
});

describe('MAX_CONNECTIONS_PER_CLIENT', () => {
  it("closes a client address's connection past the limit at once, while other addresses are served", async () => {
    await withServer({ MAX_CONNECTIONS_PER_CLIENT: '3' }, async (port) => {
      const held = [await open(port), await open(port), await open(port)];
      for (const c of held) expect(statusOf(await ask(c, GET('/up')))).toBe(200);
      const extra = await open(port);
      await extra.closed;
      expect(extra.received()).toBe('');
      const other = await open(port, '127.0.0.2');
      expect(statusOf(await ask(other, GET('/api/v1/')))).toBe(401);
      // A held connection that goes frees its place.
      held[0]!.socket.destroy();
      await held[0]!.closed;
      await expect
        .poll(
          async () => {
            const next = await open(port);
            next.socket.write(GET('/up', 'Connection: close\r\n'));
            await next.closed;
            return statusOf(next.received());
          },
          { timeout: 5000 },
        )
        .toBe(200);
      for (const c of [...held, other]) c.socket.destroy();
    });
  });

  it('does not limit a trusted proxy, whose connections carry many clients', async () => {
    await withServer({ MAX_CONNECTIONS_PER_CLIENT: '2', TRUST_PROXY: '127.0.0.1' }, async (port) => {
      const held: Raw[] = [];
      for (let i = 0; i < 5; i++) held.push(await open(port));
      for (const c of held) {
        expect(statusOf(await ask(c, GET('/up', 'X-Forwarded-For: 203.0.113.9\r\n')))).toBe(200);
      }
      for (const c of held) c.socket.destroy();
    });
  });

  it('still limits a client that names a proxy in X-Forwarded-For when its own address is not trusted', async () => {
    await withServer({ MAX_CONNECTIONS_PER_CLIENT: '2', TRUST_PROXY: '10.0.0.0/8' }, async (port) => {
      const held = [await open(port), await open(port)];
      const extra = await open(port);
      await extra.closed;
      expect(extra.received()).toBe('');
      for (const c of held) c.socket.destroy();
    });
  });
});

describe('MAX_CONNECTIONS and its reserve', () => {
  it('answers /up and the health checks past the cap, refuses other requests with a 503, closes past the reserve', async () => {
    const max = 2;
    const reserve = connectionReserve(max);
    await withServer({ MAX_CONNECTIONS: String(max), MAX_CONNECTIONS_PER_CLIENT: '0' }, async (port) => {
      const held = [await open(port), await open(port)];
      for (const c of held) expect(statusOf(await ask(c, GET('/api/v1/')))).toBe(401);

      const up = await open(port);
      const upAnswer = await ask(up, GET('/up'));
      expect(statusOf(upAnswer)).toBe(200);
      expect(upAnswer.toLowerCase()).toContain('connection: close');
      await up.closed;

      const health = await open(port);
      const healthAnswer = await ask(health, GET('/status/health'));
      expect([200, 500]).toContain(statusOf(healthAnswer));
      expect(healthAnswer).not.toContain('connection limit');
      await health.closed;

      const api = await open(port);
      const refused = await ask(api, GET('/api/v1/web/?q=a'));
      expect(statusOf(refused)).toBe(503);
      expect(refused).toContain('"detail":"The server is at its connection limit: try again shortly."');
      await api.closed;

      // The reserve full of idle connections: the next one is closed at once, unanswered.
      const idle: Raw[] = [];
      for (let i = 0; i < reserve; i++) idle.push(await open(port));
      const past = await open(port);
      await past.closed;
      expect(past.received()).toBe('');
      for (const c of [...held, ...idle]) c.socket.destroy();
    });
  });
});

describe('a server process started as npm start starts it', () => {
  it('holds MAX_CONNECTIONS_PER_CLIENT per address, closing the others at once, and serves other clients', {
    timeout: 120_000,
  }, async () => {
    const port = await freePort();
    const server = spawnServerProcess({
      ...process.env,
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      // One process: with several, the primary hands connections to whichever worker is free.
      WORKERS: '1',
      MAX_CONNECTIONS_PER_CLIENT: '2',
    });
    try {
      await expect.poll(() => server.lines().some((l) => l.msg === 'ready'), { timeout: 90_000 }).toBe(true);
      // Six silent connections from one address: two are held.
      const flood: Raw[] = [];
      for (let i = 0; i < 6; i++) flood.push(await open(port));
      let closed = 0;
      for (const c of flood) void c.closed.then(() => closed++);
      await expect.poll(() => closed, { timeout: 10_000 }).toBe(4);
      const held = flood.filter((c) => !c.socket.destroyed && c.socket.readyState === 'open');
      expect(held).toEqual([flood[0], flood[1]]);
      for (const c of held) expect(statusOf(await ask(c, GET('/up')))).toBe(200);
      expect(flood.slice(2).map((c) => c.received())).toEqual(['', '', '', '']);
      const other = await open(port, '127.0.0.3');
      expect(statusOf(await ask(other, GET('/up')))).toBe(200);
      for (const c of [...held, other]) c.socket.destroy();
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
