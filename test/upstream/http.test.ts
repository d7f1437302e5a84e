import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFailure, type HttpClient, createHttpClient } from '../../src/upstream/http.js';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.js';

const UA = 'Sift/0.1 (self-hosted metasearch; +https://example.org/sift)';

async function failure(promise: Promise<unknown>): Promise<HttpFailure> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(HttpFailure);
    return err as HttpFailure;
  }
  throw new Error('expected the call to fail');
}

describe('upstream HTTP layer against a fake server', () => {
  let fake: FakeServer;
  let http: HttpClient;

  beforeAll(async () => {
    fake = await startFakeServer({ 'GET /search': () => ({ body: { results: [{ title: 'one' }] } }) }, { gzip: true });
    http = createHttpClient({ userAgent: UA, maxBodyBytes: 1024 * 1024, secrets: ['sk-config-secret-123'] });
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  it('sends the Sift User-Agent, asks for JSON and decodes a gzip answer', async () => {
    fake.setMode({ kind: 'normal' });
    const res = await http.request({ url: `${fake.url}/search?q=x`, timeoutMs: 2000 });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ results: [{ title: 'one' }] });
    const seen = fake.requests.at(-1)!;
    expect(seen.headers['user-agent']).toBe(UA);
    expect(seen.headers.accept).toBe('application/json');
    expect(seen.headers['accept-encoding']).toMatch(/gzip/);
  });

  it('classifies a hung upstream as a timeout of its own deadline', async () => {
    fake.setMode({ kind: 'hang' });
    // The fake never answers: only the call's deadline can end it (how soon is the bench's `hung` section).
    const err = await failure(http.request({ url: `${fake.url}/search`, timeoutMs: 300 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('no complete answer within 300 ms');
  });

  it('bounds the whole call: a body that stalls after the headers is a timeout, not a hang', async () => {
    fake.setMode({ kind: 'stall' });
    // The body never ends: only the call's deadline can end it.
    const err = await failure(http.request({ url: `${fake.url}/search`, timeoutMs: 300 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('no complete answer within 300 ms');
  });

  it('classifies a connection closed before the answer as a network failure, not a failed connect', async () => {
    fake.setMode({ kind: 'reset' });
    const err = await failure(http.request({ url: `${fake.url}/search`, timeoutMs: 2000 }));
    expect(err.kind).toBe('network');
    expect(err.message).toBe('connection closed by upstream before a complete answer');
  });

  it('classifies a refused connection as a connect failure', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await failure(http.request({ url: `http://127.0.0.1:${port}/x`, timeoutMs: 2000 }));
    expect(err.kind).toBe('connect');
    expect(err.message).toBe('connection refused');
  });

  it('classifies a 500 as http_status with its code', async () => {
    fake.setMode({ kind: 'status', status: 500, body: { error: 'boom' } });
    const err = await failure(http.request({ url: `${fake.url}/search`, timeoutMs: 2000 }));
    expect(err.kind).toBe('http_status');
    expect(err.status).toBe(500);
    expect(err.message).toMatch(/^HTTP 500/);
  });

  it('classifies a 429 as rate limited', async () => {
    fake.setMode({ kind: 'status', status: 429, body: { error: 'Request rate limit exceeded for plan.' } });
    const err = await failure(http.request({ url: `${fake.url}/search`, timeoutMs: 2000 }));
    expect(err.kind).toBe('rate_limited');
    expect(err.status).toBe(429);
  });

  it('refuses a body larger than the cap as too_large without reading it all', async () => {
    fake.setMode({ kind: 'huge', bytes: 20 * 1024 * 1024 });
    const err = await failure(http.request({ url: `${fake.url}/search`, timeoutMs: 5000 }));
    // Refused by the cap, not cut by the deadline after reading on.
    expect(err.kind).toBe('too_large');
  });

  it('never puts a key from the URL, a header or the config into the error text', async () => {
    fake.setMode({
      kind: 'status',
      status: 403,
      body: 'bad key api_key=sk-url-secret-999 token sk-header-secret-42 and sk-config-secret-123',
    });
    const err = await failure(
      http.request({
        url: `${fake.url}/search?q=x&api_key=sk-url-secret-999`,
        headers: { 'X-Subscription-Token': 'sk-header-secret-42' },
        timeoutMs: 2000,
      }),
    );
    expect(err.kind).toBe('http_status');
    expect(err.message).not.toMatch(/sk-url-secret-999|sk-header-secret-42|sk-config-secret-123/);
    expect(err.message).toContain('[redacted]');
  });
});

describe('decoding and bombs', () => {
  let server: ReturnType<typeof createServer>;
  let base: string;
  let connections = 0;
  const http = createHttpClient({ userAgent: UA, maxBodyBytes: 64 * 1024 });

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/br') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
        res.end(brotliCompressSync(Buffer.from('{"ok":true}')));
      } else if (req.url === '/bomb') {
        // 10 MB of zeros gzip to ~10 KB: under the cap on the wire, far over it decoded.
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20)));
      } else if (req.url === '/moved') {
        res.writeHead(302, { location: '/br' });
        res.end();
      } else if (req.url === '/slow') {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"slow":true}');
        }, 3000);
      } else if (req.url === '/declared') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) });
        res.write('{');
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end('this is not gzip');
      }
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await http.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('decodes brotli, reusing one kept-alive connection for sequential calls', async () => {
    const before = connections;
    for (let i = 0; i < 3; i++) {
      const res = await http.request({ url: `${base}/br`, timeoutMs: 2000 });
      expect(JSON.parse(res.body.toString())).toEqual({ ok: true });
    }
    expect(connections - before).toBe(1);
  });

  it('stops a decompression bomb at the cap (too_large)', async () => {
    const err = await failure(http.request({ url: `${base}/bomb`, timeoutMs: 5000 }));
    expect(err.kind).toBe('too_large');
  });

  it('refuses a declared Content-Length over the cap before reading', async () => {
    const err = await failure(http.request({ url: `${base}/declared`, timeoutMs: 2000 }));
    expect(err.kind).toBe('too_large');
  });

  it('classifies an undecodable body as bad_response', async () => {
    const err = await failure(http.request({ url: `${base}/broken`, timeoutMs: 2000 }));
    expect(err.kind).toBe('bad_response');
  });

  it('follows a redirect only when the call asks for it', async () => {
    const followed = await http.request({ url: `${base}/moved`, timeoutMs: 2000, followRedirects: true });
    expect(JSON.parse(followed.body.toString())).toEqual({ ok: true });
    const err = await failure(http.request({ url: `${base}/moved`, timeoutMs: 2000 }));
    expect(err.kind).toBe('http_status');
    expect(err.status).toBe(302);
  });

  it('stops a call when its caller cancels it, and refuses one cancelled before it starts', async () => {
    const controller = new AbortController();
    const pending = failure(http.request({ url: `${base}/slow`, timeoutMs: 5000, signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const err = await pending;
    expect(err.kind).toBe('timeout');
    // The cancel's own message: neither the upstream's answer (after 3 s) nor the call's deadline (5 s) ended it.
    expect(err.message).toBe('cancelled before the upstream answered');

    const early = await failure(http.request({ url: `${base}/br`, timeoutMs: 2000, signal: AbortSignal.abort() }));
    expect(early.message).toBe('cancelled before the upstream answered');
  });

  it('keeps working after a call timed out: the next call gets a complete answer', async () => {
    const err = await failure(http.request({ url: `${base}/slow`, timeoutMs: 100 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('no complete answer within 100 ms');
    const res = await http.request({ url: `${base}/slow`, timeoutMs: 10_000 });
    expect(JSON.parse(res.body.toString())).toEqual({ slow: true });
  });

  it('refuses a URL that is not http or https without sending anything', async () => {
    const err = await failure(http.request({ url: 'file:///etc/passwd', timeoutMs: 2000 }));
    expect(err.kind).toBe('connect');
    expect(err.message).toBe('invalid upstream URL');
  });
});
