import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { repairInstall, startEmbeddedPostgres } from '../../src/db/embedded.js';

const dirs: string[] = [];
function tempDataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'sift-embedded-'));
  dirs.push(d);
  return d;
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function query(url: string, sql: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

afterAll(() => {
  // stop anything a failed test left running
  for (const d of dirs) {
    if (existsSync(path.join(d, 'postgres', 'postmaster.pid'))) {
      const pid = postmasterPid(d);
      if (alive(pid)) process.kill(pid, 'SIGINT');
    }
  }
});

describe('embedded PostgreSQL', () => {
  it('initialises a cluster, serves the sift database, runs as a non-root user, and stops', async () => {
    const dataDir = tempDataDir();
    const pgsql = await startEmbeddedPostgres({ dataDir });
    expect(pgsql.owned).toBe(true);
    expect(await query(pgsql.url, 'SELECT current_database() AS db')).toEqual([{ db: 'sift' }]);
    const pid = postmasterPid(dataDir);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    if (process.getuid?.() === 0) expect(uid).not.toBe(0);
    // the password file is private
    expect(readFileSync(path.join(dataDir, 'postgres.json'), 'utf8')).toMatch(/"password"/);
    await pgsql.stop();
    expect(alive(pid)).toBe(false);
  });

  it('starts the server before loading pg, then connects with it', () => {
    // A process of its own: this runner has loaded pg already.
    const dataDir = tempDataDir();
    const script = `
      import { createRequire } from 'node:module';
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/node_modules/pg/'));
      const { openDatabase } = await import('./src/db/index.ts');
      const before = loaded();
      const db = await openDatabase({ DATABASE_URL: '', DATA_DIR: ${JSON.stringify(dataDir)} });
      const { rows } = await db.pool.query('SELECT current_database() AS db');
      console.log(JSON.stringify({ before, after: loaded(), rows }));
      await db.close();
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const lastLine = run.stdout.trim().split('\n').pop()!;
    expect(JSON.parse(lastLine)).toEqual({ before: false, after: true, rows: [{ db: 'sift' }] });
  });

  it('keeps data across a restart', async () => {
    const dataDir = tempDataDir();
    const first = await startEmbeddedPostgres({ dataDir });
    await query(first.url, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
    await first.stop();
    const second = await startEmbeddedPostgres({ dataDir });
    expect(await query(second.url, 'SELECT v FROM kept')).toEqual([{ v: 'still here' }]);
    await second.stop();
  });

  it('adopts a server orphaned by a killed process, then stops it', async () => {
    const dataDir = tempDataDir();
    const child: ChildProcess = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('./src/db/embedded.ts').then(m => m.startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)} })).then(() => console.log('up'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (c) => String(c).includes('up') && resolve());
      child.on('exit', () => reject(new Error('child exited early')));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const orphan = postmasterPid(dataDir);
    expect(alive(orphan)).toBe(true);

    const adopted = await startEmbeddedPostgres({ dataDir });
    expect(adopted.owned).toBe(true);
    expect(postmasterPid(dataDir)).toBe(orphan);
    expect(await query(adopted.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await adopted.stop();
    expect(alive(orphan)).toBe(false);
  });

  it('recovers from a stale postmaster.pid whose pid now belongs to another process', async () => {
    const dataDir = tempDataDir();
    const first = await startEmbeddedPostgres({ dataDir });
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const content = readFileSync(pidFile, 'utf8');
    await first.stop();
    // pid 1-style reuse: the file names a live process that is not PostgreSQL
    writeFileSync(pidFile, content.replace(/^\d+/, String(process.pid)));
    const second = await startEmbeddedPostgres({ dataDir });
    expect(await query(second.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await second.stop();
  });

  it('joins a server another live process started, without taking ownership', async () => {
    const dataDir = tempDataDir();
    const owner = await startEmbeddedPostgres({ dataDir });
    // a second process (as the CLI would be) — simulated by a live owner file of another pid
    writeFileSync(path.join(dataDir, 'postgres.owner'), String(process.ppid));
    const joined = await startEmbeddedPostgres({ dataDir });
    expect(joined.owned).toBe(false);
    const pid = postmasterPid(dataDir);
    await joined.stop();
    expect(alive(pid)).toBe(true);
    writeFileSync(path.join(dataDir, 'postgres.owner'), String(process.pid));
    await owner.stop();
    expect(alive(pid)).toBe(false);
  });

  it('recreates library links that a skipped postinstall left out', async () => {
    const pkg = tempDataDir();
    mkdirSync(path.join(pkg, 'native', 'lib'), { recursive: true });
    writeFileSync(path.join(pkg, 'native', 'lib', 'libpq.so.5.18'), 'lib');
    writeFileSync(
      path.join(pkg, 'native', 'pg-symlinks.json'),
      JSON.stringify([
        { source: 'native/lib/libpq.so.5.18', target: 'native/lib/libpq.so.5' },
        { source: 'native/lib/libpq.so.5.18', target: 'native/lib/libpq.so' },
      ]),
    );
    await repairInstall(pkg, { info: () => {}, warn: () => {} });
    expect(readlinkSync(path.join(pkg, 'native', 'lib', 'libpq.so.5'))).toBe('libpq.so.5.18');
    expect(readFileSync(path.join(pkg, 'native', 'lib', 'libpq.so'), 'utf8')).toBe('lib');
  });

  it('lets the CLI use the running server, and start and stop its own when none runs', async () => {
    const dataDir = tempDataDir();
    const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' };
    // nothing running: the CLI starts a server for its run and stops it afterwards
    const alone = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate'], { env, encoding: 'utf8' });
    expect(alone.status, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(/Applied 0001_accounts\.sql/);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // a server running: the CLI connects to it and leaves it running
    const server = await startEmbeddedPostgres({ dataDir });
    const pid = postmasterPid(dataDir);
    const joined = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate'], { env, encoding: 'utf8' });
    expect(joined.status, joined.stderr).toBe(0);
    expect(joined.stdout).toMatch(/up to date/);
    expect(postmasterPid(dataDir)).toBe(pid);
    expect(alive(pid)).toBe(true);
    await server.stop();
  });
});
