import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { LazyRequestLogger, writeCompletedLine } from '../../src/request-log-controller.js';
import { testConfig } from '../helpers/app.js';
import { captureLogs } from '../security/support.js';

/*
 * The request log (request-log-controller.ts): one completion line per
 * request, and a request's own logger (`request.log`) made only when something
 * logs through it. Both must write what a pino child per request wrote.
 */

interface Captured {
  logger: FastifyBaseLogger;
  lines(): Record<string, unknown>[];
  raw(): string[];
  /** Child loggers made of the root logger so far. */
  children(): number;
}

/** The production logger options at trace level (security/support.ts), counting the children made of it. */
function capture(): Captured {
  const logs = captureLogs();
  const logger = logs.logger;
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  return {
    logger,
    raw: logs.lines,
    lines: () => logs.lines().map((l) => JSON.parse(l) as Record<string, unknown>),
    children: () => children,
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function appWith(log: Captured) {
  const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
  const app = await buildApp(testConfig(null), { pool, logger: log.logger });
  // Routes of this test only: one that logs through request.log, one that logs nothing.
  app.get('/test/quiet', async () => ({ ok: true }));
  app.get('/test/chatty', async (request) => {
    request.log.warn({ step: 'middle' }, 'handler says something');
    return { ok: true };
  });
  closers.push(async () => {
    await app.close();
    await pool.end();
  });
  return app;
}

describe('request log lines', () => {
  it('writes one completion line per request, with its request id, method, redacted URL, status and time', async () => {
    const log = capture();
    const app = await appWith(log);
    const res = await app.inject({
      url: '/test/quiet?q=1&api_key=sekret',
      headers: { 'x-request-id': 'req-quiet-1', 'user-agent': 'tester/1' },
    });
    expect(res.statusCode).toBe(200);
    const completed = log.lines().filter((l) => l.msg === 'request completed');
    expect(completed).toHaveLength(1);
    const line = completed[0]!;
    expect(line.reqId).toBe('req-quiet-1');
    expect(line.level).toBe(30);
    expect(line.req).toMatchObject({ method: 'GET', url: '/test/quiet?q=1&api_key=[redacted]', userAgent: 'tester/1' });
    expect(line.res).toEqual({ statusCode: 200 });
    expect(typeof line.responseTime).toBe('number');
    expect(log.raw().join('\n')).not.toContain('sekret');
  });

  it('lays the completion line out as a pino child of the request would: bindings, then the fields, then the message', async () => {
    const log = capture();
    const app = await appWith(log);
    await app.inject({ url: '/test/quiet', headers: { 'x-request-id': 'req-order' } });
    const raw = log.raw().find((l) => l.includes('"msg":"request completed"'))!;
    expect(Object.keys(JSON.parse(raw))).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'req',
      'res',
      'responseTime',
      'msg',
    ]);
  });

  it('makes no logger of its own for a request that logs only its completion line', async () => {
    const log = capture();
    const app = await appWith(log);
    await app.ready();
    const before = log.children();
    for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/test/quiet' })).statusCode).toBe(200);
    expect(log.children()).toBe(before);
    expect(log.lines().filter((l) => l.msg === 'request completed')).toHaveLength(5);
  });

  it("gives what a handler logs through request.log the request's id, and still writes its completion line", async () => {
    const log = capture();
    const app = await appWith(log);
    await app.ready();
    const before = log.children();
    const res = await app.inject({ url: '/test/chatty', headers: { 'x-request-id': 'req-chatty-1' } });
    expect(res.statusCode).toBe(200);
    expect(log.children()).toBe(before + 1);
    const said = log.lines().find((l) => l.msg === 'handler says something')!;
    expect(said).toMatchObject({ level: 40, reqId: 'req-chatty-1', step: 'middle' });
    const completed = log.lines().filter((l) => l.msg === 'request completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]!.reqId).toBe('req-chatty-1');
  });

  it('writes an unknown route and a failing request with their request ids too', async () => {
    const log = capture();
    const app = await appWith(log);
    app.get('/test/fails', async () => {
      throw new Error('boom');
    });
    expect((await app.inject({ url: '/test/nowhere', headers: { 'x-request-id': 'req-404' } })).statusCode).toBe(404);
    expect((await app.inject({ url: '/test/fails', headers: { 'x-request-id': 'req-500' } })).statusCode).toBe(500);
    const lines = log.lines();
    expect(lines.find((l) => l.reqId === 'req-404' && l.msg === 'request completed')).toMatchObject({
      res: { statusCode: 404 },
    });
    expect(lines.find((l) => l.reqId === 'req-500' && l.msg === 'request failed')).toMatchObject({ level: 50 });
    expect(lines.find((l) => l.reqId === 'req-500' && l.msg === 'request completed')).toMatchObject({
      res: { statusCode: 500 },
    });
  });
});

describe('the completion line, written without pino’s general path', () => {
  const requests = [
    { url: '/api/v1/instant/?q=17+km+in+miles', ua: 'curl/8.5.0', host: '127.0.0.1:8000', status: 200, time: 1.234567 },
    { url: '/api/v1/web/?q="quoted"\\back&api_key=sekret', ua: undefined, host: undefined, status: 429, time: 0 },
    {
      url: '/api/v1/web/?q=caf%C3%A9+ünïcödé+日本',
      ua: 'Mozilla/5.0 "x" \\ é',
      host: 'sift.example',
      status: 503,
      time: 12.5,
    },
    { url: '/status/health', ua: 'probe', host: 'h', status: 200, time: Number.POSITIVE_INFINITY },
  ];
  const fieldsOf = (r: (typeof requests)[number]) => ({
    req: { method: 'GET', url: r.url, hostname: r.host, ip: '10.0.0.7', headers: { 'user-agent': r.ua } },
    res: { statusCode: r.status },
    responseTime: r.time,
  });
  /** A line with its time (the one field that differs between two writes) taken out. */
  const timeless = (line: string) => line.replace(/,"time":\d+/, '');

  it('is byte for byte the line pino writes for the same request, at info and debug', () => {
    const logs = captureLogs();
    for (const [i, r] of requests.entries()) {
      for (const level of ['info', 'debug'] as const) {
        expect(writeCompletedLine(logs.logger, level, { reqId: `req-${i}` }, fieldsOf(r), 'request completed')).toBe(
          true,
        );
        logs.logger[level](Object.assign({ reqId: `req-${i}` }, fieldsOf(r)), 'request completed');
      }
    }
    const lines = logs.lines();
    expect(lines).toHaveLength(requests.length * 4);
    for (let i = 0; i < lines.length; i += 2) expect(timeless(lines[i]!)).toBe(timeless(lines[i + 1]!));
    expect(lines.join('\n')).not.toContain('sekret');
  });

  it('is byte for byte the line pino writes when the res serializer gives more than the status code', () => {
    const resSerializers: ((res: { statusCode: number }) => unknown)[] = [
      (res) => ({ statusCode: res.statusCode, ok: res.statusCode < 400 }),
      (res) => ({ code: res.statusCode }),
      (res) => ({ statusCode: String(res.statusCode) }),
      () => null,
    ];
    for (const res of resSerializers) {
      const logs = captureLogs({ serializers: { res } });
      for (const [i, r] of requests.entries()) {
        expect(writeCompletedLine(logs.logger, 'info', { reqId: `req-${i}` }, fieldsOf(r), 'request completed')).toBe(
          true,
        );
        logs.logger.info(Object.assign({ reqId: `req-${i}` }, fieldsOf(r)), 'request completed');
      }
      const lines = logs.lines();
      expect(lines).toHaveLength(requests.length * 2);
      for (let i = 0; i < lines.length; i += 2) expect(timeless(lines[i]!)).toBe(timeless(lines[i + 1]!));
    }
  });

  it('goes through pino for a logger whose lines pino writes otherwise (a mixin)', () => {
    const logs = captureLogs({ mixin: () => ({ worker: 3 }) });
    const lazy = new LazyRequestLogger(logs.logger, { reqId: 'req-mixin' });
    lazy.completed('info', fieldsOf(requests[0]!), 'request completed');
    expect(writeCompletedLine(logs.logger, 'info', {}, fieldsOf(requests[0]!), 'request completed')).toBe(false);
    expect(JSON.parse(logs.lines()[0]!)).toMatchObject({ worker: 3, reqId: 'req-mixin', res: { statusCode: 200 } });
  });
});

describe("the completion line's req, written without JSON.stringify", () => {
  it("is the text JSON.stringify writes of the serializer's object, for any request", async () => {
    const fc = (await import('fast-check')).default;
    const { requestJson, serializeRequest } = await import('../../src/logging.js');
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\u2028', '\ud800', 'a\nb'));
    const maybe = fc.oneof(
      text,
      fc.constant(undefined),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
    );
    fc.assert(
      fc.property(
        fc.record({
          method: fc.oneof(fc.constantFrom('GET', 'POST'), maybe),
          url: fc.oneof(
            text.map((t) => `/api/v1/web/?q=${t}&api_key=${t}`),
            maybe,
          ),
          host: maybe,
          hostname: maybe,
          ip: maybe,
          ua: maybe,
        }),
        (r) => {
          const req = {
            method: r.method,
            url: r.url,
            host: r.host,
            hostname: r.hostname,
            ip: r.ip,
            headers: { 'user-agent': r.ua },
          };
          const loggable = req as unknown as Parameters<typeof requestJson>[0];
          let expected: string | undefined;
          try {
            expected = JSON.stringify(serializeRequest(loggable));
          } catch {
            return; // a url that is not a string: the serializer itself cannot redact it
          }
          expect(requestJson(loggable)).toBe(expected);
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe("the request line's host", () => {
  it('is the Host without its port, as Fastify gives request.hostname, for any Host', async () => {
    const fc = (await import('fast-check')).default;
    const { hostnameOf } = await import('../../src/logging.js');
    // Fastify's getter: an IPv6 literal up to its bracket, anything else up to its first colon.
    const fastify = (host: string) => (host[0] === '[' ? host.slice(0, host.indexOf(']') + 1) : host.split(':', 1)[0]);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...'[]:a1.-'), { maxLength: 12 }), (parts) => {
        const host = parts.join('');
        expect(hostnameOf(host)).toBe(fastify(host));
      }),
      { numRuns: 20_000 },
    );
    expect(hostnameOf('example.org:8080')).toBe('example.org');
    expect(hostnameOf('[::1]:8080')).toBe('[::1]');
    expect(hostnameOf('')).toBe('');
  });

  it('is written from the Host header of a request, without the port', async () => {
    const log = capture();
    const app = await appWith(log);
    await app.inject({ url: '/test/quiet', headers: { host: 'sift.example:8443' } });
    const line = JSON.parse(log.raw().find((l) => l.includes('"msg":"request completed"'))!);
    expect(line.req.host).toBe('sift.example');
  });
});
