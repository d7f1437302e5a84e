import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, writeLogNow } from '../../src/logging.js';
import { BatchedLogSink } from '../../src/log-sink.js';

const line = (i: number) => `{"n":${i},"pad":"${'x'.repeat(90)}"}\n`;
const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('the server log sink', () => {
  let dir: string;
  let file: string;
  let fd: number;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sift-log-sink-'));
    file = path.join(dir, 'log');
    fd = openSync(file, 'w');
  });
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  const written = () => readFileSync(file, 'utf8');

  it('holds lines until a batch is full, then writes them all in order', () => {
    const sink = new BatchedLogSink(fd, { minLength: 1000, flushMs: 60_000 });
    for (let i = 0; i < 5; i++) sink.write(line(i));
    expect(written()).toBe('');
    for (let i = 5; i < 10; i++) sink.write(line(i));
    expect(written()).toBe(Array.from({ length: 10 }, (_, i) => line(i)).join(''));
    sink.end();
  });

  it('writes a partial batch after its flush delay, and everything at once on flushSync', async () => {
    const sink = new BatchedLogSink(fd, { minLength: 1_000_000, flushMs: 30 });
    sink.write(line(1));
    expect(written()).toBe('');
    await until(() => written() === line(1));
    sink.write(line(2));
    sink.flushSync();
    expect(written()).toBe(line(1) + line(2));
    sink.end();
  });

  it('holds 64 KB of lines for a regular file before writing them in one batch, but only 4 KB for a pipe', async () => {
    const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => line(from + i)).join('');
    // The lines that stay under 64 KB (about 600 of about 108 bytes): 50 of them are over 4 KB.
    let under = 0;
    while (lines(0, under + 1).length < 64 * 1024) under++;
    const toFile = new BatchedLogSink(fd, { flushMs: 60_000 });
    for (let i = 0; i < under; i++) toFile.write(line(i));
    expect(written()).toBe('');
    toFile.write(line(under));
    expect(written()).toBe(lines(0, under + 1));
    toFile.end();

    const out = openSync(path.join(dir, 'cat-out'), 'w');
    const cat = spawn('cat', [], { stdio: ['pipe', out, 'ignore'] });
    children.push(cat);
    closeSync(out);
    const pipeFd = (cat.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const toPipe = new BatchedLogSink(pipeFd, { flushMs: 60_000 });
    for (let i = 0; i < 50; i++) toPipe.write(line(i));
    // The flush delay is a minute: only the 4 KB batch can have sent these.
    await until(() => readFileSync(path.join(dir, 'cat-out'), 'utf8').length >= 4096);
    expect(lines(0, 50).startsWith(readFileSync(path.join(dir, 'cat-out'), 'utf8'))).toBe(true);
    toPipe.end();
  });

  it('neither throws nor blocks on a pipe nobody reads, and delivers every line in order once it is read', async () => {
    // cat, stopped: the pipe to it fills up (EAGAIN on a non-blocking pipe) until it is resumed.
    const out = openSync(path.join(dir, 'cat-out'), 'w');
    const cat = spawn('cat', [], { stdio: ['pipe', out, 'ignore'] });
    children.push(cat);
    closeSync(out);
    cat.kill('SIGSTOP');
    const pipeFd = (cat.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const sink = new BatchedLogSink(pipeFd, { minLength: 4096, flushMs: 5 });
    const count = 20_000; // about 2 MB, far more than a pipe holds
    for (let i = 0; i < count; i++) sink.write(line(i));
    // Every write returned while cat was stopped: nothing blocked on the full pipe.
    cat.kill('SIGCONT');
    const expected = Array.from({ length: count }, (_, i) => line(i)).join('');
    await until(() => readFileSync(path.join(dir, 'cat-out'), 'utf8').length >= expected.length);
    expect(readFileSync(path.join(dir, 'cat-out'), 'utf8')).toBe(expected);
    sink.end();
  });

  it('keeps lines whole when two sinks share a pipe that fills up (cluster workers share one stdout)', async () => {
    const outFile = path.join(dir, 'cat-out');
    const out = openSync(outFile, 'w');
    const cat = spawn('cat', [], { stdio: ['pipe', out, 'ignore'] });
    children.push(cat);
    closeSync(out);
    cat.kill('SIGSTOP');
    const pipeFd = (cat.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const sinks = [0, 1].map(() => new BatchedLogSink(pipeFd, { minLength: 6000, flushMs: 5 }));
    const count = 5000;
    for (let i = 0; i < count; i++) for (const [k, sink] of sinks.entries()) sink.write(line(2 * i + k));
    cat.kill('SIGCONT');
    const lines = () => readFileSync(outFile, 'utf8').split('\n').filter(Boolean);
    await until(() => lines().length >= 2 * count);
    const seen = lines().map((l) => (JSON.parse(l) as { n: number }).n);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 2 * count }, (_, i) => i));
    for (const sink of sinks) sink.end();
  });

  it('drops lines for a pipe whose reader is gone instead of throwing', async () => {
    const gone = spawn('true', [], { stdio: ['pipe', 'ignore', 'ignore'] });
    children.push(gone);
    const pipeFd = (gone.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    await new Promise((r) => gone.once('exit', r));
    const sink = new BatchedLogSink(pipeFd, { minLength: 10 });
    expect(() => {
      for (let i = 0; i < 100; i++) sink.write(line(i));
      sink.flushSync();
    }).not.toThrow();
    sink.end();
  });

  it('is where the server logger writes its JSON lines', () => {
    const log = createLogger({ LOG_LEVEL: 'info' }, fd);
    log.info({ n: 1 }, 'first');
    log.debug('not at info');
    log.warn({ n: 2 }, 'second');
    writeLogNow(log);
    const lines = written()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; level: number });
    expect(lines.map((l) => [l.msg, l.level])).toEqual([
      ['first', 30],
      ['second', 40],
    ]);
  });
});
