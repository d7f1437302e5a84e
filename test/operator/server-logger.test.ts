import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/logging.js';

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
