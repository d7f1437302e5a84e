import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, resolveLogFormat } from '../../src/runtime/logging.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the server logger', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sift-logger-'));
    file = path.join(dir, 'log');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const lines = () =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; level: number; headers?: Record<string, string> });

  it('writes JSON lines at its level and above to its descriptor, secrets in headers redacted', async () => {
    const fd = openSync(file, 'w');
    try {
      const log = createLogger({ LOG_LEVEL: 'info' }, fd);
      log.info({ n: 1 }, 'first');
      log.debug('not at info');
      log.warn({ headers: { authorization: 'Api-Key svc_sk_0123abcd.sekret', 'x-api-key': 'sekret' } }, 'second');
      // Written asynchronously: the lines arrive without anything more being logged.
      await until(() => lines().length >= 2);
      expect(lines().map((l) => [l.msg, l.level])).toEqual([
        ['first', 30],
        ['second', 40],
      ]);
      expect(lines()[1]!.headers).toEqual({ authorization: '[redacted]', 'x-api-key': '[redacted]' });
      expect(readFileSync(file, 'utf8')).not.toContain('sekret');
    } finally {
      closeSync(fd);
    }
  });

  it('writes readable lines with LOG_FORMAT=pretty: time, level, message, URL, request; secrets redacted, no colours', () => {
    const fd = openSync(file, 'w');
    try {
      const log = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, fd);
      log.info({ url: 'http://localhost:8000', ms: 812 }, 'ready');
      const req = { method: 'GET', url: '/searxng/svc_sk_0123abcd.sekret/search?q=x', headers: {} };
      log.info({ reqId: 'r1', req, res: { statusCode: 200 }, responseTime: 12.3456 }, 'request completed');
      log.warn({ headers: { authorization: 'Api-Key svc_sk_0123abcd.sekret' } }, 'second');
      // Written synchronously: a person reads each line as it comes.
      const text = readFileSync(file, 'utf8');
      expect(text.split('\n').filter(Boolean)).toEqual([
        expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: ready http:\/\/localhost:8000 \{"ms":812\}$/),
        expect.stringMatching(
          /^\[[\d:.]{12}\] INFO: request completed GET \/searxng\/\[redacted\]\/search 200 in 12\.3 ms \{"reqId":"r1"\}$/,
        ),
        expect.stringMatching(/^\[[\d:.]{12}\] WARN: second \{"headers":\{"authorization":"\[redacted\]"\}\}$/),
      ]);
      expect(text).not.toContain('sekret');
      expect(text).not.toContain('\u001b[');
    } finally {
      closeSync(fd);
    }
  });

  it('writes JSON lines by default where the descriptor is no terminal (LOG_FORMAT=auto)', () => {
    const fd = openSync(file, 'w');
    expect(resolveLogFormat('auto', fd)).toBe('json');
    closeSync(fd);
    expect(resolveLogFormat('pretty', 0)).toBe('pretty');
    expect(resolveLogFormat('json', 0)).toBe('json');
  });

  it('writes every line still pending when the process exits at once after logging them', () => {
    // A process of its own: it logs many lines and calls process.exit in the same turn.
    const script = `
      import { openSync } from 'node:fs';
      const { createLogger } = await import(${JSON.stringify(path.join(root, 'src/runtime/logging.ts'))});
      const log = createLogger({ LOG_LEVEL: 'info' }, openSync(${JSON.stringify(file)}, 'w'));
      for (let i = 0; i < 2000; i++) log.info({ i }, 'line');
      log.fatal('last words');
      log.info('after the fatal line');
      process.exit(1);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(1);
    const written = lines();
    expect(written).toHaveLength(2002);
    expect(written.at(-2)).toMatchObject({ msg: 'last words', level: 60 });
    expect(written.at(-1)).toMatchObject({ msg: 'after the fatal line' });
  });
});
