import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { testConfig } from '../helpers/app.js';
import { captureLogs } from '../security/support.js';

/*
 * The request log (app.ts): one completion line per request, with the
 * request's id, method, redacted URL, status and time, written through
 * Fastify's child logger of the request.
 */

interface Captured {
  logger: FastifyBaseLogger;
  lines(): Record<string, unknown>[];
  raw(): string[];
}

/** The production logger options at trace level (security/support.ts). */
function capture(settings: Parameters<typeof captureLogs>[1] = {}): Captured {
  const logs = captureLogs({}, settings);
  return {
    logger: logs.logger,
    raw: logs.lines,
    lines: () => logs.lines().map((l) => JSON.parse(l) as Record<string, unknown>),
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
    expect(line.req).toMatchObject({ method: 'GET', url: '/test/quiet', userAgent: 'tester/1' });
    expect(line.res).toEqual({ statusCode: 200 });
    expect(typeof line.responseTime).toBe('number');
    expect(log.raw().join('\n')).not.toContain('sekret');
  });

  it('writes the query string only with LOG_QUERIES, its secrets still redacted', async () => {
    const log = capture({ LOG_QUERIES: true });
    const app = await appWith(log);
    await app.inject({ url: '/test/quiet?q=1&api_key=sekret', headers: { 'x-request-id': 'req-quiet-2' } });
    const line = log.lines().find((l) => l.msg === 'request completed')!;
    expect(line.req).toMatchObject({ url: '/test/quiet?q=1&api_key=[redacted]' });
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

  it("gives what a handler logs through request.log the request's id, and still writes its completion line", async () => {
    const log = capture();
    const app = await appWith(log);
    const res = await app.inject({ url: '/test/chatty', headers: { 'x-request-id': 'req-chatty-1' } });
    expect(res.statusCode).toBe(200);
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

describe("the request line's host", () => {
  it('is written from the Host header of a request, without the port', async () => {
    const log = capture();
    const app = await appWith(log);
    await app.inject({ url: '/test/quiet', headers: { host: 'sift.example:8443' } });
    const line = JSON.parse(log.raw().find((l) => l.includes('"msg":"request completed"'))!);
    expect(line.req.host).toBe('sift.example');
  });

  it('keeps the brackets of an IPv6 Host and drops its port', async () => {
    const log = capture();
    const app = await appWith(log);
    await app.inject({ url: '/test/quiet', headers: { host: '[::1]:8443' } });
    const line = JSON.parse(log.raw().find((l) => l.includes('"msg":"request completed"'))!);
    expect(line.req.host).toBe('[::1]');
  });
});

describe('the request log levels', () => {
  it('writes monitor polls and incoming requests at debug, other completion lines at info', async () => {
    const log = capture();
    const app = await appWith(log);
    await app.inject({ url: '/status/health', headers: { 'x-request-id': 'req-poll' } });
    await app.inject({ url: '/test/quiet', headers: { 'x-request-id': 'req-info' } });
    const lines = log.lines();
    expect(lines.find((l) => l.reqId === 'req-poll' && l.msg === 'request completed')).toMatchObject({ level: 20 });
    expect(lines.find((l) => l.reqId === 'req-info' && l.msg === 'request completed')).toMatchObject({ level: 30 });
    expect(lines.filter((l) => l.msg === 'incoming request').map((l) => l.level)).toEqual([20, 20]);
  });
});
