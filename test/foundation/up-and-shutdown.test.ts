import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLifecycle } from '../../src/runtime/lifecycle.js';
import { createPool } from '../../src/db/pool.js';
import { shutdown } from '../../src/runtime/shutdown.js';
// @ts-expect-error: a plain .mjs script without type declarations
import { ensureBuilt } from '../../scripts/ensure-built.mjs';
import { testConfig } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';

describe('/up', () => {
  it('answers 200 OK as text/plain for any method while the database is unreachable', async () => {
    const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const app = await buildApp(testConfig(null), { pool, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const res = await fetch(`${base}/up`, { method });
      expect(res.status, method).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('OK');
    }
    const slash = await fetch(`${base}/up/?probe=1`, { headers: { Host: 'evil.example' } });
    expect(await slash.text()).toBe('OK');
    const head = await fetch(`${base}/up`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    // through Fastify itself (inject bypasses the HTTP server's fast path)
    const injected = await app.inject({ method: 'DELETE', url: '/up' });
    expect(injected.statusCode).toBe(200);
    expect(injected.body).toBe('OK');
    await app.close();
    await pool.end();
  });
});

describe('JSON errors and request ids', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('answers unknown paths with a JSON 404 and an X-Request-Id header', async () => {
    const app = await buildApp(testConfig(db), { pool: db.pool, logger: false });
    const res = await app.inject({ url: '/no/such/page' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not found.' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const given = await app.inject({ url: '/x', headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const bad = await app.inject({ url: '/x', headers: { 'x-request-id': 'not ok\u00e9' } });
    expect(bad.headers['x-request-id']).not.toBe('not ok\u00e9');
    await app.close();
  });
});

describe('graceful shutdown', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('lets an in-flight request finish, refuses new connections, flushes, then closes the pool', async () => {
    const lifecycle = createLifecycle();
    const pool = createPool(db.url);
    const app = await buildApp(testConfig(db), { pool, lifecycle, logger: false });
    app.get('/slow', async () => {
      await new Promise((r) => setTimeout(r, 400));
      return { done: true };
    });
    const flushed: string[] = [];
    lifecycle.onFlush('counter', async () => {
      const { rows } = await pool.query('SELECT 1 AS one');
      flushed.push(`flushed:${rows[0].one}`);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    const inFlight = fetch(`${base}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await new Promise((r) => setTimeout(r, 100));
    const stopping = shutdown({
      app,
      lifecycle,
      closeDatabase: () => pool.end(),
      drainTimeoutMs: 5000,
      log: { warn: () => {}, error: () => {} },
    });
    await new Promise((r) => setTimeout(r, 50));
    await expect(fetch(`${base}/up`, { headers: { connection: 'close' } })).rejects.toThrow();
    expect(await inFlight).toEqual({ status: 200, body: { done: true } });
    await stopping;
    expect(flushed[0]).toBe('flushed:1');
    expect(pool.ending).toBe(true);
  });

  it('stops a real server process on SIGTERM with exit status 0', async () => {
    const server = spawnServer(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      PORT: '0',
      WORKERS: '1',
      DATABASE_URL: db.url,
    });
    await waitFor(() => server.output().includes('"msg":"ready"'), 20_000);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });

  it('leaves no embedded database running when stopped while it starts (one process)', async () => {
    ensureBuilt();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sift-stop-early-'));
    try {
      const server = spawnServer(process.execPath, ['dist/server.js'], {
        PORT: '0',
        WORKERS: '1',
        DATA_DIR: dataDir,
        DATABASE_URL: '',
      });
      // Creating an empty database takes about a second: the signal comes while it is made and started.
      await waitFor(() => existsSync(path.join(dataDir, 'postgres')), 20_000);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(server.output()).not.toContain('"msg":"ready"');
      await waitFor(() => !existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 5000);
      const running = spawnSync('pgrep', ['-f', `postgres -D ${dataDir}`], { encoding: 'utf8' });
      expect(running.stdout.trim()).toBe('');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('starts the built bundle through bin/sift-server (the npm start and Docker command) as node itself, with its V8 flags, two workers serving pages from views/', async () => {
    ensureBuilt();
    // scripts/build.mjs: dist/server.js is the bundle, its lazily loaded parts in dist/chunks/, not tsc's modules.
    const entry = readFileSync('dist/server.js', 'utf8');
    expect(entry).toMatch(/from "\.\/chunks\/[\w-]+\.js"/);
    expect(entry).not.toMatch(/from ['"]\.\/cluster\//);
    const port = await freePort();
    const { child, output, exited } = spawnServer('sh', ['bin/sift-server'], {
      PORT: String(port),
      DATABASE_URL: db.url,
      WORKERS: '2',
    });
    try {
      await waitFor(() => output().includes('"msg":"ready"'), 20_000);
      expect(output()).toContain('"workers":2');
      expect((await fetch(`http://127.0.0.1:${port}/up`)).status).toBe(200);
      // The templates and migrations are found from the bundle's chunks (src/runtime/project-root.ts).
      const login = await fetch(`http://127.0.0.1:${port}/login`);
      expect(login.status).toBe(200);
      expect(await login.text()).toMatch(/<form[^>]*method="post"/i);
      // The script execs node: the pid is the server's, so signals reach it directly.
      const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      expect(path.basename(cmdline[0]!)).toMatch(/^node/);
      expect(cmdline).toContain('--max-semi-space-size=32');
      expect(cmdline).toContain('--heap-growing-percent=50');
      expect(cmdline).toContain('dist/server.js');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it("keeps the libraries' class names in the built bundle (a pg error is a DatabaseError, not DatabaseError2)", () => {
    ensureBuilt();
    // The pool's chunk, as the server loads it: it brings pg.
    const poolChunk = /"\.\/(chunks\/pool-[\w-]+\.js)"/.exec(readFileSync('dist/server.js', 'utf8'))?.[1];
    expect(poolChunk).toBeDefined();
    const script = `
      const { createPool } = await import('./dist/${poolChunk}');
      const pool = createPool(${JSON.stringify(db.url)});
      const err = await pool.query('select * from no_such_table_anywhere').catch((e) => e);
      await pool.end();
      console.log(JSON.stringify({ type: err.constructor.name, code: err.code }));
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual({ type: 'DatabaseError', code: '42P01' });
  });

  it("keeps every error class's own name in the built bundle: esbuild renamed none to keep two modules' names apart", () => {
    ensureBuilt();
    // The server's entry, its chunks and the page extraction worker's entry (scripts/build.mjs).
    const files = [
      ...['dist', 'dist/chunks'].flatMap((dir) =>
        readdirSync(dir)
          .filter((name) => name.endsWith('.js'))
          .map((name) => path.join(dir, name)),
      ),
      'dist/contents/extract/worker.js',
    ].map((file) => readFileSync(file, 'utf8'));
    const declared = files.flatMap((text) => [
      ...text.matchAll(/\bclass\s+([A-Za-z_$][\w$]*Error\d*)\b|\b([A-Za-z_$][\w$]*Error\d*)\s*=\s*class\b/g),
    ]);
    const names = new Set(declared.map((m) => m[1] ?? m[2]!));
    // The bundle's own error classes are declared as the scan expects (it would find none otherwise).
    expect(names).toContain('UpstreamError');
    // esbuild gives a renamed class a number: UndiciError2, DatabaseError2.
    expect([...names].filter((name) => /\d$/.test(name))).toEqual([]);
  });
});

describe('request log lines of a server process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('writes each request line within a moment when idle, and the lines still pending when stopped', async () => {
    ensureBuilt();
    const port = await freePort();
    const { child, output, exited } = spawnServer(process.execPath, ['dist/server.js'], {
      PORT: String(port),
      DATABASE_URL: db.url,
    });
    const completed = () =>
      output()
        .split('\n')
        .filter((l) => l.includes('"msg":"request completed"')).length;
    try {
      await waitFor(() => output().includes('"msg":"ready"'), 20_000);
      // One request, then nothing: its line is written although far less than a buffer's worth waits.
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/?first`)).status).toBe(401);
      await waitFor(() => completed() === 1, 2000);
      // A burst, then at once a stop: every line reaches the output before the process ends.
      const burst = await Promise.all(
        Array.from({ length: 20 }, (_, i) => fetch(`http://127.0.0.1:${port}/api/v1/?n=${i}`).then((r) => r.status)),
      );
      expect(burst.every((s) => s === 401)).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(completed()).toBe(21);
    expect(output()).toContain('"msg":"stopped"');
  });
});

/** A server process on 127.0.0.1 at LOG_LEVEL=info: its combined output so far, and its exit code once it ends. */
function spawnServer(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => output, exited };
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('malformed requests', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('answers a malformed URL with a JSON 400, never a 500', async () => {
    const app = await buildApp(testConfig(db), { pool: db.pool, logger: false });
    for (const url of ['/status/health/%ZZ', '/api/v1/web/%E0%A4%A', '/%']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.json()).toHaveProperty('detail');
    }
    await app.close();
  });
});
