import { type ChildProcess, spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import { CREATE_FIRST_USER, reachOf, serverUrl } from '../../src/runtime/ready.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';

/*
 * What a person sees in the terminal they start the real server in
 * (src/server.ts through tsx): on a terminal (a pseudo-terminal made by
 * util-linux's script(1)) human-readable lines, JSON otherwise or when
 * LOG_FORMAT=json; the provider summary once per server, whatever WORKERS
 * is; a ready line with the URL, and the command that creates the first
 * user while there is none.
 */

interface Server {
  child: ChildProcess;
  output: () => string;
  /** Output lines without colours and carriage returns. */
  lines: () => string[];
  exited: Promise<number | null>;
}

const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN|ERROR|DEBUG|FATAL): /;

function start(env: Record<string, string>, options: { terminal: boolean }): Server {
  // No HOST: a plain start binds the default address.
  const { HOST: _host, ...inherited } = process.env;
  const serverEnv = { ...inherited, LOG_LEVEL: 'info', PROBE_INTERVAL_SECONDS: '0', ...env };
  const node = [process.execPath, '--import', 'tsx', 'src/server.ts'];
  // script(1) runs the server on a pseudo-terminal of its own and copies what it writes there.
  const child = options.terminal
    ? spawn('script', ['--quiet', '--flush', '--return', '--command', node.join(' '), '/dev/null'], {
        env: serverEnv,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn(node[0]!, node.slice(1), { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const lines = () =>
    stripVTControlCharacters(output)
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '');
  return { child, output: () => output, lines, exited };
}

async function waitFor(what: string, cond: () => boolean, s: Server, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (s.child.exitCode !== null) throw new Error(`the server exited waiting for ${what}:\n${s.output()}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}:\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stop(s: Server): Promise<void> {
  if (s.child.exitCode === null) s.child.kill('SIGTERM');
  await s.exited;
}

const summaryLines = (lines: string[]) =>
  lines.filter((l) => /providers (engine|media|cards|instant|maps|translate): /.test(l));

describe('the server in a terminal', () => {
  let fresh: TestDatabase;
  let withUser: TestDatabase;
  beforeAll(async () => {
    [fresh, withUser] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    await createUser(withUser.pool, { username: 'someone' });
  });
  afterAll(async () => {
    await Promise.all([fresh?.drop(), withUser?.drop()]);
  });

  it('prints readable lines on a terminal: the providers, the ready URL and the first user command', async () => {
    const port = await freePort();
    const s = start({ PORT: String(port), WORKERS: '1', DATABASE_URL: fresh.url }, { terminal: true });
    try {
      await waitFor('the first-user hint', () => s.output().includes('no user yet'), s);
      const lines = s.lines();
      // No line is JSON: each starts with its time and level.
      for (const line of lines.filter((l) => !l.startsWith(' '))) expect(line).toMatch(PRETTY_LINE);
      expect(lines.some((l) => l.startsWith('{'))).toBe(false);
      const ready = lines.findIndex((l) => /INFO: ready /.test(l));
      // The address bound and who can reach it: a plain start is this machine's only.
      expect(lines[ready]).toMatch(
        new RegExp(
          `INFO: ready http://127\\.0\\.0\\.1:${port} \\{"host":"127\\.0\\.0\\.1","reachable_from":"this machine only","ms":\\d+\\}$`,
        ),
      );
      // The hint right after the ready line.
      expect(lines[ready + 1]).toMatch(PRETTY_LINE);
      expect(lines[ready + 1]).toContain(`no user yet; create the first one: ${CREATE_FIRST_USER}`);
      expect(summaryLines(lines)).toHaveLength(6);
    } finally {
      await stop(s);
    }
  });

  it('writes JSON lines on a terminal when LOG_FORMAT=json, and no hint once a user exists', async () => {
    const port = await freePort();
    const s = start(
      { PORT: String(port), WORKERS: '1', DATABASE_URL: withUser.url, LOG_FORMAT: 'json' },
      { terminal: true },
    );
    try {
      await waitFor('ready', () => s.output().includes('"msg":"ready"'), s);
      const records = s.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
      // A plain start listens on this machine only, and says so.
      expect(records.find((r) => r.msg === 'ready')).toMatchObject({
        url: `http://127.0.0.1:${port}`,
        host: '127.0.0.1',
        reachable_from: 'this machine only',
        level: 30,
      });
      expect(s.output()).not.toContain('no user yet');
    } finally {
      await stop(s);
    }
  });

  it('prints the provider summary and the ready line once with WORKERS=2 (LOG_FORMAT=pretty on a pipe)', async () => {
    const port = await freePort();
    const s = start(
      { PORT: String(port), WORKERS: '2', DATABASE_URL: fresh.url, LOG_FORMAT: 'pretty' },
      { terminal: false },
    );
    try {
      await waitFor('the first-user hint', () => s.output().includes('no user yet'), s);
      // Each worker writes its own line as it starts listening: on a busy machine one can come after
      // the primary's ready line and hint.
      await waitFor(
        'two "worker ready" lines',
        () => s.lines().filter((l) => /INFO: worker ready /.test(l)).length >= 2,
        s,
      );
      const lines = s.lines();
      // Not a terminal: no colours.
      expect(s.output()).toBe(stripVTControlCharacters(s.output()));
      expect(lines.filter((l) => /INFO: worker ready /.test(l))).toHaveLength(2);
      const summary = summaryLines(lines);
      expect(summary.map((l) => /providers (\w+):/.exec(l)![1])).toEqual([
        'engine',
        'media',
        'cards',
        'instant',
        'maps',
        'translate',
      ]);
      const ready = lines.filter((l) => /INFO: ready /.test(l));
      expect(ready).toHaveLength(1);
      expect(ready[0]).toContain(`INFO: ready http://127.0.0.1:${port} {`);
      expect(ready[0]).toContain('"workers":2');
      expect(lines.filter((l) => l.includes(CREATE_FIRST_USER))).toHaveLength(1);
    } finally {
      await stop(s);
    }
  });

  it('does not repeat the provider summary when a worker is replaced', async () => {
    const port = await freePort();
    const s = start(
      { PORT: String(port), WORKERS: '2', DATABASE_URL: withUser.url, LOG_FORMAT: 'json' },
      { terminal: false },
    );
    const records = () => s.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    const workerReady = () => records().filter((r) => r.msg === 'worker ready');
    try {
      await waitFor('two workers', () => workerReady().length === 2 && records().some((r) => r.msg === 'ready'), s);
      const first = workerReady().find((r) => r.worker === 0)!;
      // The worker that logged the summary, killed outright: the primary starts another as worker 0.
      process.kill(first.pid as number, 'SIGKILL');
      await waitFor(
        'a replacement worker 0',
        () => workerReady().some((r) => r.worker === 0 && r.pid !== first.pid),
        s,
      );
      expect(summaryLines(s.lines())).toHaveLength(6);
      expect(records().filter((r) => r.msg === 'ready')).toHaveLength(1);
    } finally {
      await stop(s);
    }
  });
});

describe('the ready URL', () => {
  it('is the listening address, with localhost for a wildcard one and brackets for IPv6', () => {
    expect(serverUrl('0.0.0.0', 8000)).toBe('http://localhost:8000');
    expect(serverUrl('::', 8000)).toBe('http://localhost:8000');
    expect(serverUrl('127.0.0.1', 18080)).toBe('http://127.0.0.1:18080');
    expect(serverUrl('::1', 8000)).toBe('http://[::1]:8000');
    expect(serverUrl('sift.internal', 80)).toBe('http://sift.internal:80');
  });

  it('says who can reach the address bound', () => {
    expect(reachOf('127.0.0.1')).toBe('this machine only');
    expect(reachOf('::1')).toBe('this machine only');
    expect(reachOf('0.0.0.0')).toBe('every network interface');
    expect(reachOf('::')).toBe('every network interface');
    expect(reachOf('192.168.1.20')).toBe('the interface of 192.168.1.20');
  });
});
