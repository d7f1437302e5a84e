import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, type ServerProcess, spawnServerProcess } from '../helpers/server.js';

/*
 * WORKERS=2: real server processes (src/server.ts through tsx) sharing one
 * port under a cluster primary. Both workers answer, and the usage either
 * shows counts the other's searches at once; a worker that dies is replaced; SIGTERM drains every worker (a search in flight still gets its
 * answer) and exits 0; with no DATABASE_URL the primary owns the embedded
 * database and stops it last; a worker that cannot start stops the server.
 */

interface Server extends ServerProcess {
  port: number;
}

let db: TestDatabase;
let fakes: WebFakes;
let apiKey: string;

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startServer(env: Record<string, string>, port?: number): Promise<Server> {
  const p = port ?? (await freePort());
  const server = spawnServerProcess({
    ...process.env,
    PORT: String(p),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    WORKERS: '2',
    ...env,
  });
  return { ...server, port: p };
}

const readyLine = (s: Server) => s.lines().some((l) => l.msg === 'ready');

function stop(s: Server): Promise<number | null> {
  if (s.child.exitCode === null) s.child.kill('SIGTERM');
  return s.exited;
}

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  const user = await createUser(db.pool, { username: 'clustered' });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
});

afterAll(async () => {
  await fakes?.close();
  await db?.drop();
});

describe('WORKERS=2', () => {
  it('answers on one port from two worker processes, and replaces a worker that dies', {
    timeout: 90_000,
  }, async () => {
    const s = await startServer({ DATABASE_URL: db.url, ...fakes.env });
    try {
      await waitFor('ready', () => readyLine(s));
      const ready = s.lines().find((l) => l.msg === 'ready')!;
      expect(ready.workers).toBe(2);
      // The primary says "ready" once both workers listen, which each does just before it writes its
      // own "worker ready": on a busy machine that line can come after the primary's (a CI run
      // started while other work ran saw one of the two).
      const workerLines = () => s.lines().filter((l) => l.msg === 'worker ready');
      await waitFor('two "worker ready" lines', () => workerLines().length >= 2);
      const workers = workerLines();
      expect(workers.map((l) => l.worker).sort()).toEqual([0, 1]);
      const pids = new Set(workers.map((l) => l.pid));
      expect(pids.size).toBe(2);
      expect(pids.has(s.child.pid)).toBe(false);

      // Requests are spread over both workers (each logs its requests with its pid).
      for (let i = 0; i < 12; i++) {
        // A new connection each time: the primary hands connections (not requests) to the workers in turn.
        const res = await fetch(`http://127.0.0.1:${s.port}/api/v1/web/?q=cluster+${i}`, {
          headers: { authorization: `Api-Key ${apiKey}`, connection: 'close' },
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
      }
      const completed = () => s.lines().filter((l) => l.msg === 'request completed');
      await waitFor('request log lines', () => completed().length >= 12, 5000);
      const answering = new Set(completed().map((l) => l.pid));
      expect([...answering].filter((pid) => pids.has(pid)).length).toBe(2);

      // Usage: searches answered by either worker a moment ago are in the count the other shows.
      const counter = await createUser(db.pool, { username: 'counted' });
      const counted = (await issueApiKey(db.pool, counter.id)).key;
      const ask = (path: string) =>
        fetch(`http://127.0.0.1:${s.port}${path}`, {
          headers: { authorization: `Api-Key ${counted}`, connection: 'close' },
        });
      for (let i = 0; i < 10; i++) expect((await ask(`/api/v1/instant/?q=${i}%2B1`)).status).toBe(200);
      for (let i = 0; i < 2; i++) {
        const key = (await (await ask('/api/v1/key/')).json()) as { usage: { searches: number } };
        expect(key.usage.searches).toBe(10);
      }

      // A worker killed outright: the primary starts another with the same index.
      const victim = workers.find((l) => l.worker === 1)!.pid as number;
      process.kill(victim, 'SIGKILL');
      await waitFor('a replacement worker', () =>
        s.lines().some((l) => l.msg === 'worker ready' && l.worker === 1 && l.pid !== victim),
      );
      expect(s.lines().find((l) => l.msg === 'worker exited; starting another')).toMatchObject({
        worker: 1,
        signal: 'SIGKILL',
      });
      for (let i = 0; i < 4; i++) expect((await fetch(`http://127.0.0.1:${s.port}/up`)).status).toBe(200);
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });

  it('suspends a provider on every worker together, shows its new state on both at once, and a scrape counts both workers', {
    timeout: 90_000,
  }, async () => {
    const s = await startServer({
      DATABASE_URL: db.url,
      ...fakes.env,
      PROVIDER_SUSPEND_AFTER_FAILURES: '4',
      PROVIDER_SUSPEND_FIRST_SECONDS: '60',
      METRICS_ENABLED: 'true',
      // The request lines below are found by their query text, which the log keeps only when asked.
      LOG_QUERIES: 'true',
    });
    const mojeekCalls = () => fakes.mojeek.requests.length;
    const search = async (i: number) => {
      // A new connection each time, so the searches alternate between the workers.
      const res = await fetch(
        `http://127.0.0.1:${s.port}/api/v1/web/?q=suspended+${i}&engine=provider_01,provider_02`,
        {
          headers: { authorization: `Api-Key ${apiKey}`, connection: 'close' },
        },
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { unresponsive: { engine: string; reason: string }[] }).unresponsive;
    };
    try {
      await waitFor('ready', () => readyLine(s));
      const health = async () => {
        const res = await fetch(`http://127.0.0.1:${s.port}/status/health/provider_02`, {
          headers: { connection: 'close' },
        });
        return ((await res.json()) as { status: string }).status;
      };
      // Both workers have read (and cached) the provider's state.
      expect(await search(-1)).toEqual([]);
      await waitFor('the provider read as ok', async () => (await health()) === 'ok');
      for (let i = 0; i < 4; i++) expect(await health()).toBe('ok');
      fakes.mojeek.setMode({ kind: 'status', status: 500, body: { error: 'down' } });
      const before = mojeekCalls();
      // Four failures in a row, seen two by each worker: a single process would suspend after them, so do both.
      expect(await search(0)).toEqual([{ engine: 'provider_02', reason: 'error' }]);
      // The failure is written behind the response: once one worker shows it, both do (no stale cached state on the other).
      await waitFor('a worker to show the provider down', async () => (await health()) === 'down');
      for (let i = 0; i < 2; i++) expect(await health()).toBe('down');
      for (let i = 1; i < 4; i++) expect(await search(i)).toEqual([{ engine: 'provider_02', reason: 'error' }]);
      expect(mojeekCalls() - before).toBe(4);
      for (let i = 4; i < 10; i++) expect(await search(i)).toEqual([{ engine: 'provider_02', reason: 'unavailable' }]);
      expect(mojeekCalls() - before).toBe(4);
      // Both workers answered some of those searches.
      const answered = () =>
        s.lines().filter((l) => l.msg === 'request completed' && JSON.stringify(l).includes('suspended'));
      await waitFor('request log lines', () => answered().length >= 11, 5000);
      expect(new Set(answered().map((l) => l.pid)).size).toBe(2);
      const warned = s.lines().filter((l) => l.msg?.toString().startsWith('provider suspended'));
      // Logged once, by the worker that saw the fourth failure.
      expect(warned).toHaveLength(1);

      // Every request counted, whichever worker answered it and whichever answers the scrape.
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`http://127.0.0.1:${s.port}/metrics`, { headers: { connection: 'close' } });
        expect(res.status).toBe(200);
        const text = await res.text();
        const web = text
          .split('\n')
          .filter((l) => l.startsWith('sift_http_requests_total{') && l.includes('route="/api/v1/web/"'))
          .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
        expect(web).toBe(11);
        expect(text).toMatch(
          /sift_provider_suspended_seconds\{provider="provider_02",group="engine"\} (5\d|60)(\.\d+)?\n/,
        );
        expect(text).toMatch(/sift_provider_state\{provider="provider_01",group="engine",state="(up|unknown)"\} 1\n/);
      }
    } finally {
      fakes.mojeek.setMode({ kind: 'normal' });
      await stop(s);
    }
  });

  it('keeps every log line whole when both workers write to one slow pipe', { timeout: 90_000 }, async () => {
    const s = await startServer({ DATABASE_URL: db.url, ...fakes.env });
    try {
      await waitFor('ready', () => readyLine(s));
      // Nobody reads the pipe for a while: it fills, and the workers' writes wait and resume in pieces.
      s.child.stdout!.pause();
      const burst = Array.from({ length: 40 }, (_, c) =>
        (async () => {
          for (let i = 0; i < 40; i++) {
            const res = await fetch(`http://127.0.0.1:${s.port}/api/v1/web/?q=${'x'.repeat(1500)}+${c}+${i}`, {
              headers: { connection: 'close' },
            });
            expect(res.status).toBe(401);
          }
        })(),
      );
      await new Promise((r) => setTimeout(r, 1500));
      s.child.stdout!.resume();
      await Promise.all(burst);
      const requestLines = () =>
        s
          .output()
          .split('\n')
          .filter((l) => l.includes('request completed'));
      await waitFor('the request lines', () => requestLines().length >= 1600, 20_000);
      const broken = s
        .output()
        .split('\n')
        .filter((l) => l.length > 0)
        .filter((l) => {
          try {
            JSON.parse(l);
            return false;
          } catch {
            return true;
          }
        });
      expect(broken.slice(0, 2)).toEqual([]);
    } finally {
      await stop(s);
    }
  });

  it('drains every worker on SIGTERM: a search in flight gets its answer, then exit 0', {
    timeout: 60_000,
  }, async () => {
    const s = await startServer({ DATABASE_URL: db.url, ...fakes.env, PROVIDER_TIMEOUT_MS: '5000' });
    try {
      await waitFor('ready', () => readyLine(s));
      fakes.setLatency(1500);
      const url = (i: number) => `http://127.0.0.1:${s.port}/api/v1/web/?q=draining+${i}`;
      const inFlight = [0, 1, 2, 3].map((i) =>
        fetch(url(i), { headers: { authorization: `Api-Key ${apiKey}` } }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { results: unknown[] },
        })),
      );
      // Every search has reached the engines (so each is in a worker's hands) before the signal.
      await waitFor('the searches to reach the engines', () =>
        [fakes.brave, fakes.mojeek].every(
          (f) => f.requests.filter((r) => [...r.query.values()].some((v) => v.includes('draining'))).length >= 4,
        ),
      );
      s.child.kill('SIGTERM');
      const answers = await Promise.all(inFlight);
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.body.results.length).toBeGreaterThan(0);
      }
      expect(await s.exited).toBe(0);
      const lines = s.lines();
      expect(lines.filter((l) => l.msg === 'stopped' && l.worker !== undefined)).toHaveLength(2);
      expect(lines.at(-1)).toMatchObject({ msg: 'stopped', pid: s.child.pid });
    } finally {
      fakes.setLatency(0);
      await stop(s);
    }
  });

  it('starts and stops the embedded database in the primary when DATABASE_URL is unset', {
    timeout: 90_000,
  }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sift-workers-'));
    const env: Record<string, string> = { DATA_DIR: dataDir };
    const s = await startServer({ ...env, DATABASE_URL: '' });
    try {
      await waitFor('ready', () => readyLine(s), 60_000);
      const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
      expect(existsSync(pidFile)).toBe(true);
      const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      expect((await fetch(`http://127.0.0.1:${s.port}/status/health`)).status).toBe(200);
      expect(await stop(s)).toBe(0);
      // The database went down after the workers, and with the primary.
      expect(existsSync(pidFile)).toBe(false);
      const alive = () => {
        try {
          process.kill(postmaster, 0);
          return !readFileSync(`/proc/${postmaster}/stat`, 'utf8').includes(') Z ');
        } catch {
          return false;
        }
      };
      await waitFor('the postmaster to exit', () => !alive(), 5000);
      const lines = s.lines();
      const stoppedDb = lines.findIndex((l) => l.msg === 'embedded postgres: stopped');
      const lastWorker = lines.findLastIndex((l) => l.msg === 'stopped' && l.worker !== undefined);
      expect(stoppedDb).toBeGreaterThan(lastWorker);
    } finally {
      await stop(s);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('exits 1 when the database cannot be reached, stopping the workers still loading at once', {
    timeout: 60_000,
  }, async () => {
    const unused = await freePort();
    const s = await startServer({ DATABASE_URL: `postgres://postgres@127.0.0.1:${unused}/none` });
    expect(await s.exited).toBe(1);
    expect(s.output()).toMatch(/ECONNREFUSED/);
    // Killed by signal, not left to the primary's 5 s kill (they could not hear a stop order yet).
    expect(s.lines().some((l) => l.msg === 'workers did not stop in time; killing them')).toBe(false);
    expect(readyLine(s)).toBe(false);
  });

  it('leaves no embedded database running when stopped while it starts', { timeout: 90_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sift-workers-'));
    try {
      const s = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '' });
      // The workers are forked before the database starts (here: created, which takes a while).
      await waitFor('the workers to start', () => s.lines().some((l) => l.msg === 'workers starting'));
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
      expect(readyLine(s)).toBe(false);
      const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
      // Whether the server had come up or not, nothing of it runs now.
      await waitFor('no postmaster', () => !existsSync(pidFile), 5000);
      const running = spawnSync('pgrep', ['-f', `postgres -D ${dataDir}`], { encoding: 'utf8' });
      expect(running.stdout.trim()).toBe('');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('exits 1 when the workers cannot listen (the port is taken)', { timeout: 60_000 }, async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const s = await startServer({ DATABASE_URL: db.url }, port);
      expect(await s.exited).toBe(1);
      expect(s.output()).toMatch(/EADDRINUSE|address already in use/);
      expect(readyLine(s)).toBe(false);
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});
