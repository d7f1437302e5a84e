import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/*
 * A generic fault server that stands in front of one upstream's fake, on its
 * own loopback port:
 *
 *   const station = await startFaultStation(fake.url);
 *   env.MOJEEK_BASE_URL = station.rewrite(env.MOJEEK_BASE_URL);  // the app talks to the station
 *   await station.setFault('drip');                              // … which misbehaves
 *   await station.setFault('pass');                              // … or forwards to the fake
 *
 * Faults (whatever the path and method):
 *   pass                forwards the request to the fake and its answer back.
 *   refused             nothing listens on the port: connections are refused
 *                       (open connections are closed too).
 *   reset-mid-body      200 JSON with a Content-Length, part of the body, then a TCP reset.
 *   drip                200 JSON, then one byte every DRIP_INTERVAL_MS, forever
 *                       (until the client goes away, at most a minute).
 *   http-500            500 with a text body.
 *   http-429            429 with `Retry-After: 120` and a JSON body.
 *   invalid-json        200 application/json whose body is truncated JSON.
 *   huge-50mb           200 application/json, 50 MB of valid JSON, chunked (no Content-Length),
 *                       written as fast as the client reads, stopped when it goes away.
 *   wrong-content-type  200 text/html with an HTML page (a captive portal, a proxy's error page).
 *   redirect-loop       302 to the same URL, every time.
 *
 * Idle connections (kept alive, or opened and never used) are closed after
 * about a second, so a test can wait for the open connections to drop back
 * to zero.
 */

export const FAULTS = [
  'refused',
  'reset-mid-body',
  'drip',
  'http-500',
  'http-429',
  'invalid-json',
  'huge-50mb',
  'wrong-content-type',
  'redirect-loop',
] as const;

export type Fault = 'pass' | (typeof FAULTS)[number];

export const DRIP_INTERVAL_MS = 50;
const DRIP_MAX_MS = 60_000;
export const HUGE_BYTES = 50 * 1024 * 1024;
const HUGE_CHUNK = Buffer.from(`{"pad":"${'x'.repeat(64 * 1024 - 12)}"},`);

export interface FaultStation {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly fault: Fault;
  /** Requests received (any fault), since the last resetCounters(). */
  readonly requests: number;
  /** Connections accepted, since the last resetCounters(). */
  readonly connections: number;
  setFault(fault: Fault): Promise<void>;
  /** `value` (a URL or URL template of the fake) with the fake's origin replaced by the station's. */
  rewrite(value: string): string;
  /** Connections open right now. */
  openConnections(): number;
  /** Fault answers still being written (drip, huge). */
  activeStreams(): number;
  resetCounters(): void;
  close(): Promise<void>;
}

export async function startFaultStation(targetUrl: string): Promise<FaultStation> {
  const target = new URL(targetUrl);
  const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const sockets = new Set<Socket>();
  let streams = 0;
  let fault: Fault = 'pass';
  let requests = 0;
  let connections = 0;
  let server: http.Server | null = null;
  let port = 0;

  function forward(req: http.IncomingMessage, res: http.ServerResponse) {
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        agent: proxyAgent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }

  /** Keeps writing until `done` or the client is gone; resolves when it stopped. */
  function streaming(res: http.ServerResponse, run: (stop: () => boolean) => Promise<void>) {
    streams++;
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    run(() => closed || res.destroyed)
      .catch(() => {})
      .finally(() => {
        streams--;
        if (!res.destroyed) res.destroy();
      });
  }

  function answer(req: http.IncomingMessage, res: http.ServerResponse) {
    requests++;
    switch (fault) {
      case 'pass':
      case 'refused':
        return forward(req, res);
      case 'reset-mid-body': {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
        res.write(`{"results":[{"title":"${'x'.repeat(2000)}`, () => {
          setTimeout(() => res.socket?.resetAndDestroy(), 5);
        });
        return;
      }
      case 'drip':
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"results":[');
        streaming(res, async (stopped) => {
          const until = Date.now() + DRIP_MAX_MS;
          while (!stopped() && Date.now() < until) {
            await new Promise((r) => setTimeout(r, DRIP_INTERVAL_MS));
            if (!stopped()) res.write(' ');
          }
        });
        return;
      case 'http-500':
        req.resume();
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Internal Server Error');
        return;
      case 'http-429':
        req.resume();
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' });
        res.end(JSON.stringify({ error: 'Too many requests, slow down' }));
        return;
      case 'invalid-json':
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"results": [{"title": "truncated');
        return;
      case 'huge-50mb':
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"results":[');
        streaming(res, async (stopped) => {
          let sent = 0;
          while (sent < HUGE_BYTES && !stopped()) {
            if (!res.write(HUGE_CHUNK)) {
              await new Promise<void>((r) => {
                const done = () => {
                  res.off('drain', done);
                  res.off('close', done);
                  r();
                };
                res.on('drain', done);
                res.on('close', done);
              });
            }
            sent += HUGE_CHUNK.length;
          }
          if (!stopped()) res.end('{}]}');
        });
        return;
      case 'wrong-content-type':
        req.resume();
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!DOCTYPE html><html><head><title>Sign in</title></head><body>Sign in to the network</body></html>');
        return;
      case 'redirect-loop':
        req.resume();
        res.writeHead(302, { location: `http://127.0.0.1:${port}${req.url ?? '/'}`, 'content-length': '0' });
        res.end();
        return;
    }
  }

  async function open(): Promise<void> {
    // Idle connections are closed after a second, like a busy upstream would: kept-alive ones after
    // their last answer, and new ones that never sent a request (undici opens one to replace a
    // connection it destroyed to stop a call).
    const srv = http.createServer({ connectionsCheckingInterval: 200, headersTimeout: 1000 }, answer);
    srv.keepAliveTimeout = 1000;
    srv.on('connection', (socket: Socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => {
        srv.off('error', reject);
        resolve();
      });
    });
    port = (srv.address() as AddressInfo).port;
    server = srv;
  }

  async function shut(): Promise<void> {
    const srv = server;
    server = null;
    if (!srv) return;
    const closed = new Promise<void>((r) => srv.close(() => r()));
    for (const s of sockets) s.destroy();
    await closed;
  }

  await open();
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: origin,
    get fault() {
      return fault;
    },
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
    async setFault(next) {
      fault = next;
      if (next === 'refused') {
        await shut();
        // Clients see their keep-alive connections closed before they are refused new ones.
        await new Promise((r) => setTimeout(r, 50));
      } else if (!server) await open();
    },
    rewrite(value) {
      if (!value.startsWith(target.origin)) throw new Error(`${value} is not served by ${target.origin}`);
      return origin + value.slice(target.origin.length);
    },
    openConnections: () => sockets.size,
    activeStreams: () => streams,
    resetCounters() {
      requests = 0;
      connections = 0;
    },
    async close() {
      await shut();
      proxyAgent.destroy();
    },
  };
}
