import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { WebClient } from '../auth/web-client.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, type ServerProcess, spawnServerProcess } from '../helpers/server.js';

/*
 * Provider state across processes, with real servers (src/server.ts through
 * tsx) on one database, a real fake upstream (Mojeek, provider_02) switched
 * between failing and answering, and a real webhook receiver. The provider is
 * flipped down, up, down, up, each time seen by the process that did NOT see
 * the state before (the case a per-process "last write" once got wrong):
 * every transition shows on every reader (/status/health, /status/health/<p>,
 * /api/v1/status/, the status page, on every process) within 5 s, and sends
 * exactly one webhook, none missed, none spurious, without the upstream's
 * error text.
 */

const PROVIDER = 'provider_02';
const PASSWORD = 'provider state password';
/** What the failing upstream answers: markup a chat receiver would act on. */
const HOSTILE_ERROR = { error: '<!channel> see <https://evil.example/|the fix>' };

interface Server extends ServerProcess {
  base: string;
}

interface Hook {
  event: string;
  text: string;
  slug?: string;
  old_state?: string;
  new_state?: string;
  changes?: { slug: string; old_state: string; new_state: string }[];
}

let db: TestDatabase;
let fakes: WebFakes;
let apiKey: string;
let received: { raw: string; body: Hook }[] = [];
let receiver: http.Server;
let receiverUrl: string;
const servers: Server[] = [];

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const server: Server = {
    ...spawnServerProcess({
      ...process.env,
      ...fakes.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: db.url,
      ALERT_WEBHOOK_URLS: receiverUrl,
      ALERT_DIGEST_WINDOW_MS: '0',
      PROBE_INTERVAL_SECONDS: '0',
      PROVIDER_SUSPEND_AFTER_FAILURES: '0',
      API_THROTTLE_BURST: '100000/min',
      ...env,
    }),
    base: `http://127.0.0.1:${port}`,
  };
  servers.push(server);
  await waitFor('ready', () => server.lines().some((l) => l.msg === 'ready') || server.child.exitCode !== null, 60_000);
  expect(server.child.exitCode, server.output()).toBeNull();
  return server;
}

async function stopAll(): Promise<void> {
  for (const s of servers.splice(0)) {
    if (s.child.exitCode === null) s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }
}

/** The pids of a server's worker processes (the server's own pid with WORKERS=1). */
function workerPids(s: Server): number[] {
  const workers = s.lines().filter((l) => l.msg === 'worker ready');
  return workers.length > 0 ? workers.map((l) => l.pid as number) : [s.child.pid!];
}

let searches = 0;
/**
 * Searches Mojeek alone on `s` (a new connection each time) until the search lands on the process
 * `pid` (another process answering first sees the same upstream state, which changes nothing to
 * what is checked). Returns when that answer arrived.
 */
async function searchOn(s: Server, pid: number): Promise<void> {
  for (let tries = 0; tries < 12; tries++) {
    const q = `flip${++searches}`;
    const res = await fetch(`${s.base}/api/v1/web/?q=${q}&engine=${PROVIDER}`, {
      headers: { authorization: `Api-Key ${apiKey}`, connection: 'close' },
    });
    await res.arrayBuffer();
    expect([200, 502, 503]).toContain(res.status);
    let line: Record<string, unknown> | undefined;
    await waitFor('the request log line', () => {
      line = s.lines().find((l) => l.msg === 'request completed' && JSON.stringify(l).includes(`q=${q}&`));
      return line !== undefined;
    });
    if (line!.pid === pid) return;
  }
  throw new Error(`no search reached process ${pid}`);
}

/** Every reader of every server shows `state` for the provider, in one pass (new connections: either worker). */
async function everyReaderShows(all: Server[], clients: WebClient[], state: 'up' | 'down'): Promise<boolean> {
  const close = { connection: 'close' };
  for (const [i, s] of all.entries()) {
    for (let n = 0; n < 2; n++) {
      const one = (await (await fetch(`${s.base}/status/health/${PROVIDER}`, { headers: close })).json()) as {
        state: string;
      };
      if (one.state !== state) return false;
    }
    const rollUp = (await (await fetch(`${s.base}/status/health`, { headers: close })).json()) as { down: string[] };
    if (rollUp.down.includes(PROVIDER) !== (state === 'down')) return false;
    const api = (await (
      await fetch(`${s.base}/api/v1/status/`, { headers: { ...close, authorization: `Api-Key ${apiKey}` } })
    ).json()) as { providers: { slug: string; state: string }[] };
    if (api.providers.find((p) => p.slug === PROVIDER)?.state !== state) return false;
    const page = await clients[i]!.get('/status');
    if (!page.text.includes(`id="provider-${PROVIDER}" data-state="${state}"`)) return false;
  }
  return true;
}

async function outboxEmpty(): Promise<boolean> {
  const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM alert_outbox');
  return Number(rows[0]!.n) === 0;
}

/**
 * Flips the upstream to `state`, observed on process `pid` of `observer`; then every reader of
 * every server must show it (how soon is the read caches' lifetimes: waitFor's bound only keeps a
 * reader that never shows it from hanging the test), and the receiver must get the change as the
 * next webhook.
 */
async function flip(all: Server[], clients: WebClient[], observer: Server, pid: number, state: 'up' | 'down') {
  if (state === 'down') fakes.mojeek.setMode({ kind: 'status', status: 500, body: HOSTILE_ERROR });
  else fakes.mojeek.setMode({ kind: 'normal' });
  const before = received.length;
  await searchOn(observer, pid);
  await waitFor(`every reader to show ${state}`, () => everyReaderShows(all, clients, state));
  await waitFor(`the webhook for ${state}`, () => received.length > before, 10_000);
  expect(received[before]!.body).toMatchObject({
    event: 'provider_state_changed',
    slug: PROVIDER,
    old_state: state === 'down' ? 'up' : 'down',
    new_state: state,
  });
}

async function signedIn(s: Server): Promise<WebClient> {
  const client = new WebClient(s.base, { connection: 'close' });
  const res = await client.signIn('operator', PASSWORD);
  expect(res.status).toBe(302);
  return client;
}

/** After the last flip: everything queued was delivered, and it was exactly the four changes. */
async function expectExactlyFourWebhooks(): Promise<void> {
  await waitFor('the outbox to empty', outboxEmpty, 15_000);
  expect(received.map((r) => [r.body.old_state, r.body.new_state])).toEqual([
    ['up', 'down'],
    ['down', 'up'],
    ['up', 'down'],
    ['down', 'up'],
  ]);
  for (const r of received) {
    // Only Sift's own words: nothing of what the upstream said.
    expect(r.raw).not.toMatch(/channel|evil\.example|the fix/);
    expect(r.body.text).toMatch(
      /^Sift: Mojeek \(provider_02, engine\) is (down|back up) \(since [\d-]+ [\d:]+ UTC\)\.$/,
    );
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  const user = await createUser(db.pool, { username: 'operator', password: PASSWORD });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      received.push({ raw, body: JSON.parse(raw) as Hook });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/token`;
});

afterEach(async () => {
  fakes.mojeek.setMode({ kind: 'normal' });
  await stopAll();
  received = [];
  await db.pool.query('DELETE FROM provider_status; DELETE FROM provider_history; DELETE FROM alert_outbox');
});

afterAll(async () => {
  await stopAll();
  receiver?.closeAllConnections();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  await fakes?.close();
  await db?.drop();
});

describe('provider state at any process count', () => {
  it('WORKERS=2: down, up, down, up, each seen by the other worker, shows within 5 s with one webhook each', {
    timeout: 180_000,
  }, async () => {
    const s = await startServer({ WORKERS: '2' });
    await waitFor('two workers', () => workerPids(s).length === 2);
    const [w0, w1] = workerPids(s) as [number, number];
    const clients = [await signedIn(s)];

    // Both workers see it working first (a first observation announces nothing).
    await searchOn(s, w0);
    await searchOn(s, w1);
    await waitFor('up everywhere', () => everyReaderShows([s], clients, 'up'), 5000);
    expect(received).toEqual([]);

    await flip([s], clients, s, w1, 'down');
    await flip([s], clients, s, w0, 'up');
    await flip([s], clients, s, w1, 'down');
    await flip([s], clients, s, w0, 'up');
    await expectExactlyFourWebhooks();

    // The readers were answered by both workers.
    const readers = s
      .lines()
      .filter((l) => l.msg === 'request completed' && JSON.stringify(l).includes('/api/v1/status/'));
    expect(new Set(readers.map((l) => l.pid)).size).toBe(2);
  });

  it('two instances on one database: down, up, down, up, each seen by the other instance, one webhook each', {
    timeout: 180_000,
  }, async () => {
    const [a, b] = await Promise.all([startServer({ WORKERS: '1' }), startServer({ WORKERS: '1' })]);
    const [pa, pb] = [workerPids(a)[0]!, workerPids(b)[0]!];
    const clients = [await signedIn(a), await signedIn(b)];
    await searchOn(a, pa);
    await searchOn(b, pb);
    await waitFor('up everywhere', () => everyReaderShows([a, b], clients, 'up'), 5000);
    expect(received).toEqual([]);

    await flip([a, b], clients, b, pb, 'down');
    await flip([a, b], clients, a, pa, 'up');
    await flip([a, b], clients, b, pb, 'down');
    await flip([a, b], clients, a, pa, 'up');
    await expectExactlyFourWebhooks();
  });
});
