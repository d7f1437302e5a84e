import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/*
 * Real HTTP fake upstreams on 127.0.0.1. Each fake answers its upstream's
 * real response shapes; every fake can be switched into a fault mode to test
 * how Sift copes (and to benchmark it, see bench/).
 */

export type FaultMode =
  | { kind: 'normal' }
  /** Answer normally after `ms`. */
  | { kind: 'slow'; ms: number }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** Reply with this status and a JSON (or text) body. */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** 200 with a body that is not JSON. */
  | { kind: 'garbage' }
  /** 200 with a JSON body of about `bytes` bytes. */
  | { kind: 'huge'; bytes: number }
  /** Send headers and a little of the body, then stall forever. */
  | { kind: 'stall' }
  /** Destroy the connection without answering. */
  | { kind: 'reset' };

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** When its request line arrived (performance.now() of the test process, ms). */
  at: number;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Serialized as JSON unless it is a string. */
  body: unknown;
}

export type FakeHandler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeServer {
  url: string;
  /** Every request received, newest last. */
  requests: FakeRequest[];
  /** Switch the fault mode for all routes (or only for paths starting with `pathPrefix`). */
  setMode(mode: FaultMode, pathPrefix?: string): void;
  /** Default latency added to every normal answer (ms). */
  latencyMs: number;
  close(): Promise<void>;
}

export interface FakeServerOptions {
  port?: number;
  latencyMs?: number;
  /** Compress JSON answers with gzip when the client accepts it. */
  gzip?: boolean;
}

/** Starts a fake upstream. `routes` maps "GET /path" (or "/path" for any method) to a handler. */
export async function startFakeServer(
  routes: Record<string, FakeHandler>,
  options: FakeServerOptions = {},
): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const modes: { prefix: string; mode: FaultMode }[] = [];
  const open = new Set<ServerResponse>();
  const sockets = new Set<import('node:net').Socket>();

  const fake: FakeServer = {
    url: '',
    requests,
    latencyMs: options.latencyMs ?? 0,
    setMode(mode, pathPrefix = '') {
      const i = modes.findIndex((m) => m.prefix === pathPrefix);
      if (i >= 0) modes.splice(i, 1);
      if (mode.kind !== 'normal' || pathPrefix) modes.push({ prefix: pathPrefix, mode });
      modes.sort((a, b) => b.prefix.length - a.prefix.length);
    },
    async close() {
      for (const res of open) res.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server: Server = createServer(async (req, res) => {
    const at = performance.now();
    const body = await bodyOf(req);
    const u = new URL(req.url ?? '/', 'http://fake');
    const fr: FakeRequest = {
      method: req.method ?? 'GET',
      path: u.pathname,
      query: u.searchParams,
      headers: req.headers,
      body,
      at,
    };
    requests.push(fr);
    const mode = modes.find((m) => fr.path.startsWith(m.prefix))?.mode ?? { kind: 'normal' };
    open.add(res);
    res.on('close', () => open.delete(res));
    try {
      await answer(fr, mode, req, res);
    } catch (err) {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err) }));
      }
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function answer(fr: FakeRequest, mode: FaultMode, req: IncomingMessage, res: ServerResponse) {
    switch (mode.kind) {
      case 'hang':
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'stall':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"results": [');
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html><body>502 Bad Gateway</body></html> not json {');
        return;
      case 'huge': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = `{"pad":"${'x'.repeat(64 * 1024)}"},`;
        res.write('{"results":[');
        let sent = 0;
        while (sent < mode.bytes && !res.destroyed) {
          if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
          sent += chunk.length;
        }
        res.end('{}]}');
        return;
      }
      case 'status': {
        const text = typeof mode.body === 'string';
        res.writeHead(mode.status, {
          'content-type': text ? 'text/plain' : 'application/json',
          ...mode.headers,
        });
        res.end(text ? (mode.body as string) : JSON.stringify(mode.body ?? { error: `status ${mode.status}` }));
        return;
      }
      case 'slow':
        await new Promise((r) => setTimeout(r, mode.ms));
        break;
      case 'normal':
        break;
    }
    if (fake.latencyMs > 0) await new Promise((r) => setTimeout(r, fake.latencyMs));
    const handler = routes[`${fr.method} ${fr.path}`] ?? routes[fr.path];
    if (!handler) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'not found', path: fr.path }));
      return;
    }
    const reply = await handler(fr);
    const isText = typeof reply.body === 'string';
    const text = isText ? (reply.body as string) : JSON.stringify(reply.body);
    const headers: Record<string, string> = {
      'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
      ...reply.headers,
    };
    // With its length declared, the head and a text body go out in one write (chunked, as before
    // 2026-12-02, they took five): the benchmark's fakes answer thousands of these a second.
    let payload: Buffer | string = text;
    if (options.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      payload = gzipSync(text);
      headers['content-encoding'] = 'gzip';
    }
    if (!hasHeader(headers, 'content-length')) headers['content-length'] = String(Buffer.byteLength(payload));
    res.writeHead(reply.status ?? 200, headers);
    res.end(payload);
  }

  await new Promise<void>((r) => server.listen(options.port ?? 0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/**
 * The request's body as text. A request that declares none (a GET, as every upstream call of Sift
 * but LibreTranslate's) is not read through the stream's async iterator, which cost the benchmark's
 * fakes more than the rest of reading the request.
 */
function bodyOf(req: IncomingMessage): Promise<string> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
    req.resume();
    return Promise.resolve('');
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return true;
  return false;
}
