import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, type ServerProcess, spawnServerProcess } from '../helpers/server.js';

/*
 * Page contents across processes: two Sift instances (separate server processes) on one database
 * read pages of one site. The site is a server of this test that answers each page after a pause
 * and records how many requests it holds at once: never more than CONTENTS_HOST_CONCURRENCY for
 * the whole deployment. A page one instance read is answered from the shared cache by the other.
 */

const PAGE_DELAY_MS = 400;
const HOST_CONCURRENCY = 2;

const ARTICLE = (n: string) => `<!doctype html><html lang="en"><head><title>Page ${n}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Page ${n}</h1>
<p>Night trains are back in the Alps. Page ${n} tells how the sleeper from Zurich to Ljubljana returned after
twenty years, with couchettes, a dining car and a timetable that reaches the coast by morning.</p>
<p>The operators share the cost of the rolling stock, and the border stations stay open at night so that
passengers sleep through the crossing. Tickets go on sale three months ahead.</p>
<p>Travellers who tried the first runs praised the quiet cabins and the breakfast served before arrival,
and asked for more routes next year.</p></article>
<footer>© The Alpine Gazette</footer></body></html>`;

interface Site {
  url: string;
  port: number;
  requests: string[];
  maxInFlight: number;
  close(): Promise<void>;
}

async function startSlowSite(): Promise<Site> {
  let inFlight = 0;
  const site = { requests: [] as string[], maxInFlight: 0 } as Site;
  const server: Server = createServer((req, res) => {
    if (req.url === '/robots.txt') {
      res.writeHead(404).end();
      return;
    }
    site.requests.push(req.url ?? '');
    inFlight++;
    site.maxInFlight = Math.max(site.maxInFlight, inFlight);
    setTimeout(() => {
      inFlight--;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE(req.url ?? ''));
    }, PAGE_DELAY_MS);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  site.port = (server.address() as AddressInfo).port;
  site.url = `http://127.0.0.1:${site.port}`;
  site.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return site;
}

let db: TestDatabase;
let site: Site;
let apiKey: string;
const servers: (ServerProcess & { port: number })[] = [];

async function waitFor(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startInstance(): Promise<ServerProcess & { port: number }> {
  const port = await freePort();
  const server = spawnServerProcess({
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    WORKERS: '1',
    DATABASE_URL: db.url,
    API_THROTTLE_BURST: '100000/min',
    API_THROTTLE_SUSTAINED: '1000000/day',
    CONTENTS_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    CONTENTS_HOST_CONCURRENCY: String(HOST_CONCURRENCY),
    CONTENTS_TIMEOUT_SECONDS: '60',
    CONTENTS_EXTRACT_THREADS: '1',
  });
  const instance = { ...server, port };
  servers.push(instance);
  await waitFor('ready', () => server.lines().some((l) => l.msg === 'ready'));
  return instance;
}

async function read(instance: { port: number }, url: string): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${instance.port}/api/v1/contents/?url=${encodeURIComponent(url)}`, {
    headers: { authorization: `Api-Key ${apiKey}` },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  db = await createTestDatabase();
  site = await startSlowSite();
  const user = await createUser(db.pool, { username: 'pages' });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
}, 90_000);

afterAll(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null) s.child.kill('SIGTERM');
    await s.exited;
  }
  await site?.close();
  await db?.drop();
});

describe('page contents on two instances', () => {
  it('holds the per-site limit across instances and reads a page once for the deployment', {
    timeout: 120_000,
  }, async () => {
    const [a, b] = await Promise.all([startInstance(), startInstance()]);

    // Twelve distinct pages of one site at once, half through each instance.
    const urls = Array.from({ length: 12 }, (_, i) => `${site.url}/page-${i}.html`);
    const pages = await Promise.all(urls.map((url, i) => read(i % 2 === 0 ? a! : b!, url)));
    expect(pages.map((p) => p.title)).toEqual(urls.map((_, i) => `Page /page-${i}.html`));
    expect(site.maxInFlight).toBe(HOST_CONCURRENCY);

    // The instances share their cache once each has seen the other (they renew their membership
    // every few seconds); then a page read through one is answered by the other without a fetch.
    const end = Date.now() + 30_000;
    for (;;) {
      const { rows } = await db.pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM upstream_cache_members WHERE alive_until > extract(epoch FROM clock_timestamp()) * 1000',
      );
      if (Number(rows[0]!.n) >= 2 || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // A member learns of the other at its next renewal.
    await new Promise((r) => setTimeout(r, 2500));
    const shared = `${site.url}/shared.html`;
    expect((await read(a!, shared)).cached).toBe(false);
    const again = await read(b!, shared);
    expect(again.cached).toBe(true);
    expect(site.requests.filter((r) => r === '/shared.html')).toHaveLength(1);
  });
});
