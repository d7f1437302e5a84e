import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../runtime/project-root.js';
import {
  type Binaries,
  type EmbeddedLogger,
  EmbeddedPostgresError,
  type RunAs,
  SUPERUSER,
  ensureTraversable,
  locateBinaries,
  processAlive,
  quietLogger,
  runLoadingPg,
  serverUser,
} from './embedded-host.js';

/*
 * The embedded server's clusters: made by initdb, copied from the build's
 * template, or taken whole as the template's spare; each with its generated
 * superuser password (postgres.json).
 */

/** Writes a cluster's password file (`postgres.json`, mode 0600); a spare's also names its database. */
async function writeCredentials(file: string, password: string, database?: string): Promise<void> {
  await fs.writeFile(file, JSON.stringify({ user: SUPERUSER, password, database }), { mode: 0o600 });
}

export async function readPassword(credFile: string): Promise<string | null> {
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

export async function initCluster(
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
