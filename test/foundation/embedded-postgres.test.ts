import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  prepareClusterTemplate,
  prepareSpareCluster,
  repairInstall,
  spareDirOf,
  startEmbeddedPostgres,
} from '../../src/db/embedded.js';

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

/**
 * Whether the process is gone within `ms`: pg_ctl's stop returns once the postmaster has removed its
 * pid file, which it does a moment before it exits (CI once saw it still running right after).
 */
async function goneWithin(pid: number, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return !alive(pid);
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

/** The superuser password in a folder's `postgres.json` (a DATA_DIR's, or a spare's). */
function passwordIn(dir: string): string {
  return (JSON.parse(readFileSync(path.join(dir, 'postgres.json'), 'utf8')) as { password: string }).password;
}

/** A folder that looks like a cluster template (a PG_VERSION) but holds nothing to copy. */
function brokenTemplate(): string {
  const broken = path.join(tempDataDir(), 'postgres-template');
  mkdirSync(broken);
  writeFileSync(path.join(broken, 'PG_VERSION'), '18\n');
  return broken;
}

/** A logger that keeps what it is told, warnings marked `warn: `. */
function recordingLogger(): { said: string[]; logger: { info(m: string): void; warn(m: string): void } } {
  const said: string[] = [];
  return { said, logger: { info: (m) => said.push(m), warn: (m) => said.push(`warn: ${m}`) } };
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
    expect(await goneWithin(pid)).toBe(true);
  });

  it('makes new clusters by copying the cluster template, each with a superuser password of its own', async () => {
    const template = path.join(tempDataDir(), 'postgres-template');
    const { said, logger } = recordingLogger();
    expect(await prepareClusterTemplate({ dir: template, logger })).toBe(template);
    const madeAt = statSync(path.join(template, 'PG_VERSION')).mtimeMs;
    // A second preparation finds it made.
    await prepareClusterTemplate({ dir: template });
    expect(statSync(path.join(template, 'PG_VERSION')).mtimeMs).toBe(madeAt);

    const dirA = tempDataDir();
    const dirB = tempDataDir();
    const a = await startEmbeddedPostgres({ dataDir: dirA, templateDir: template, logger });
    const b = await startEmbeddedPostgres({ dataDir: dirB, templateDir: template, logger });
    try {
      expect(said.filter((m) => m.includes(`from the template ${template}`))).toHaveLength(2);
      expect(said.filter((m) => m.startsWith('warn:'))).toEqual([]);
      expect(await query(a.url, 'SELECT current_database() AS db')).toEqual([{ db: 'sift' }]);
      expect(await query(b.url, 'SELECT current_database() AS db')).toEqual([{ db: 'sift' }]);
      expect(passwordIn(dirA)).not.toBe(passwordIn(dirB));
      // A's password does not open B: the copy's password was changed, not inherited.
      const withAsPassword = b.url.replace(encodeURIComponent(passwordIn(dirB)), encodeURIComponent(passwordIn(dirA)));
      await expect(query(withAsPassword, 'SELECT 1')).rejects.toMatchObject({ code: '28P01' });
      // The template itself was never started.
      expect(existsSync(path.join(template, 'postmaster.pid'))).toBe(false);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("takes the template's spare cluster whole for a start that may, with its database and a password of its own, then copies the template", async () => {
    const template = path.join(tempDataDir(), 'postgres-template');
    const { said, logger } = recordingLogger();
    await prepareClusterTemplate({ dir: template, logger });
    expect(await prepareSpareCluster({ templateDir: template, logger })).toBe(true);
    const spare = spareDirOf(template);
    expect(existsSync(path.join(spare, 'pgdata', 'PG_VERSION'))).toBe(true);
    const sparePassword = passwordIn(spare);
    // A start that may not take it (tests, tools) copies the template and leaves the spare.
    const plain = await startEmbeddedPostgres({ dataDir: tempDataDir(), templateDir: template, logger });
    await plain.stop();
    expect(existsSync(spare)).toBe(true);

    const dirA = tempDataDir();
    const dirB = tempDataDir();
    const a = await startEmbeddedPostgres({ dataDir: dirA, templateDir: template, logger, takeSpare: true });
    try {
      expect(said.filter((m) => m.includes(`from the spare of the template ${template}`))).toHaveLength(1);
      expect(existsSync(spare)).toBe(false);
      expect(await query(a.url, 'SELECT current_database() AS db')).toEqual([{ db: 'sift' }]);
      const passwordA = passwordIn(dirA);
      expect(passwordA).toBe(sparePassword);
      // Nothing of the claimed spare is left beside the cluster.
      expect(readdirSync(dirA).filter((f) => f.includes('spare'))).toEqual([]);
      // The spare is gone: the next start copies the template, with a password of its own.
      const b = await startEmbeddedPostgres({ dataDir: dirB, templateDir: template, logger, takeSpare: true });
      await b.stop();
      expect(said.filter((m) => m.includes(`from the template ${template}`))).toHaveLength(2);
      const passwordB = passwordIn(dirB);
      expect(passwordB).not.toBe(passwordA);
      expect(said.filter((m) => m.startsWith('warn:'))).toEqual([]);
    } finally {
      await a.stop();
    }
  });

  // /dev/shm is a tmpfs on Linux, another filesystem than the temporary directory's disk.
  const otherFilesystem =
    existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(os.tmpdir()).dev ? '/dev/shm' : null;
  it.skipIf(otherFilesystem === null)(
    'copies the template, leaving the spare, when DATA_DIR is on another filesystem (a Docker volume)',
    async () => {
      const template = path.join(tempDataDir(), 'postgres-template');
      await prepareClusterTemplate({ dir: template });
      await prepareSpareCluster({ templateDir: template });
      const dataDir = mkdtempSync(path.join(otherFilesystem as string, 'sift-embedded-'));
      dirs.push(dataDir);
      const { said, logger } = recordingLogger();
      const pgsql = await startEmbeddedPostgres({
        dataDir,
        templateDir: template,
        takeSpare: true,
        logger,
      });
      try {
        expect(said.filter((m) => m.includes(`from the template ${template}`))).toHaveLength(1);
        expect(existsSync(path.join(spareDirOf(template), 'pgdata', 'PG_VERSION'))).toBe(true);
        expect(await query(pgsql.url, 'SELECT current_database() AS db')).toEqual([{ db: 'sift' }]);
      } finally {
        await pgsql.stop();
      }
    },
  );

  it('makes no spare from a template that cannot be copied, and says why', async () => {
    const broken = brokenTemplate();
    const { said, logger } = recordingLogger();
    const made = await prepareSpareCluster({ templateDir: broken, logger });
    expect(made).toBe(false);
    expect(existsSync(spareDirOf(broken))).toBe(false);
    expect(readdirSync(path.dirname(broken))).toEqual(['postgres-template']);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^warn: embedded postgres: no spare cluster \(.*the cluster template .* failed \(/);
    expect(said[0]).not.toMatch(/running initdb/);
  });

  it('leaves a spare made for another database to a start of that database', async () => {
    const template = path.join(tempDataDir(), 'postgres-template');
    await prepareClusterTemplate({ dir: template });
    await prepareSpareCluster({ templateDir: template, database: 'other_app' });
    const pgsql = await startEmbeddedPostgres({ dataDir: tempDataDir(), templateDir: template, takeSpare: true });
    await pgsql.stop();
    expect(existsSync(path.join(spareDirOf(template), 'pgdata', 'PG_VERSION'))).toBe(true);
    const other = await startEmbeddedPostgres({
      dataDir: tempDataDir(),
      templateDir: template,
      takeSpare: true,
      databaseName: 'other_app',
    });
    try {
      expect(existsSync(spareDirOf(template))).toBe(false);
      expect(await query(other.url, 'SELECT current_database() AS db')).toEqual([{ db: 'other_app' }]);
    } finally {
      await other.stop();
    }
  });

  it('makes the cluster with initdb when the template cannot be copied, and says so', async () => {
    const broken = brokenTemplate();
    const { said, logger } = recordingLogger();
    const dataDir = tempDataDir();
    const pgsql = await startEmbeddedPostgres({
      dataDir,
      templateDir: broken,
      logger,
    });
    try {
      expect(said.some((m) => m.startsWith(`warn: embedded postgres: the cluster template ${broken} failed`))).toBe(
        true,
      );
      expect(said.some((m) => m.includes('initialised a new cluster'))).toBe(true);
      expect(await query(pgsql.url, 'SELECT current_database() AS db')).toEqual([{ db: 'sift' }]);
    } finally {
      await pgsql.stop();
    }
  });

  it('removes older cluster templates beside a new one', async () => {
    const cache = tempDataDir();
    const older = path.join(cache, 'postgres-17.0.0-linux-x64');
    mkdirSync(older);
    writeFileSync(path.join(older, 'PG_VERSION'), '17\n');
    const unfinished = path.join(cache, 'postgres-18.0.0-linux-x64.tmp-999999999');
    mkdirSync(unfinished);
    // The new template's own spare stays; an unfinished spare of a process gone does not.
    const spare = path.join(cache, 'postgres-18.4.0-linux-x64.spare');
    mkdirSync(spare);
    const unfinishedSpare = `${spare}.tmp-999999999`;
    mkdirSync(unfinishedSpare);
    const template = await prepareClusterTemplate({ dir: path.join(cache, 'postgres-18.4.0-linux-x64') });
    expect(existsSync(path.join(template, 'PG_VERSION'))).toBe(true);
    expect(existsSync(older)).toBe(false);
    expect(existsSync(unfinished)).toBe(false);
    expect(existsSync(spare)).toBe(true);
    expect(existsSync(unfinishedSpare)).toBe(false);
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
    expect(await goneWithin(orphan)).toBe(true);
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

  it("stops its server while this process's own named connections (the key-change listener's) are open, and leaves it to another Sift process's", async () => {
    const dataDir = tempDataDir();
    const pgsql = await startEmbeddedPostgres({ dataDir });
    const pid = postmasterPid(dataDir);
    const connect = async (applicationName: string) => {
      const c = new pg.Client({ connectionString: pgsql.url, application_name: applicationName });
      c.on('error', () => {});
      await c.connect();
      return c;
    };
    // Another Sift process on the same server: left running for it.
    const other = await connect(`sift:${process.pid + 1}`);
    await pgsql.stop();
    expect(alive(pid)).toBe(true);
    await other.end();
    // This process's listener: not another process, so the server it started is stopped.
    const again = await startEmbeddedPostgres({ dataDir });
    const own = await connect(`sift:${process.pid}:auth-listener`);
    const pid2 = postmasterPid(dataDir);
    await again.stop();
    expect(await goneWithin(pid2)).toBe(true);
    await own.end().catch(() => {});
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
    expect(await goneWithin(pid)).toBe(true);
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
    const alone = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate'], {
      env,
      encoding: 'utf8',
    });
    expect(alone.status, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(/Applied 0013_baseline\.sql/);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // a server running: the CLI connects to it and leaves it running
    const server = await startEmbeddedPostgres({ dataDir });
    const pid = postmasterPid(dataDir);
    const joined = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate'], {
      env,
      encoding: 'utf8',
    });
    expect(joined.status, joined.stderr).toBe(0);
    expect(joined.stdout).toMatch(/up to date/);
    expect(postmasterPid(dataDir)).toBe(pid);
    expect(alive(pid)).toBe(true);
    await server.stop();
  });
});
