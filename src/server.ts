import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import closeWithGrace from 'close-with-grace';
import type pino from 'pino';
import { workerPeers } from './cluster/peers.js';
import { runPrimary } from './cluster/primary.js';
import { isClusterWorker, onStopOrder, type WorkerStart, waitForStartOrder } from './cluster/start-up.js';
import { type Config, ConfigError, loadConfig } from './config/index.js';
import { resolveSecretKey } from './config/secret-key.js';
import type { openDatabase } from './db/index.js';
import { createLifecycle } from './runtime/lifecycle.js';
import { createLogger } from './runtime/logging.js';
import { logReady, serverUrl, usersExist } from './runtime/ready.js';
import { shutdown } from './runtime/shutdown.js';

/*
 * The server process. WORKERS=1: this process is the whole server.
 * WORKERS>1 (the default, one per core, on a machine with several): this
 * process becomes the cluster primary (cluster/primary.ts),
 * which owns the database and forks the workers; each worker lands here too
 * and runs one instance with what the primary sent it.
 */

type Log = pino.Logger;

/*
 * The app's modules (Fastify, undici, the providers…) take about 400 ms to
 * load. They are imported while the database starts, not before:
 * an instance starts them alongside the embedded server, a worker while its
 * primary starts it, and a primary never loads them.
 */
const loadApp = () => import('./app.js');

/** One instance: database, app, listening socket; stopped by closeWithGrace. */
async function runInstance(
  config: Config,
  log: Log,
  worker?: WorkerStart,
  appModule: ReturnType<typeof loadApp> = loadApp(),
): Promise<void> {
  const started = Date.now();
  // Awaited below; a load failure is reported there, not as an unhandled rejection meanwhile.
  appModule.catch(() => {});
  const lifecycle = createLifecycle();
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let opening: ReturnType<typeof openDatabase> | undefined;
  let app: Awaited<ReturnType<Awaited<ReturnType<typeof loadApp>>['buildApp']>> | undefined;

  let closing = false;
  // Registered first, so a signal during start-up still stops the embedded server.
  const { close } = closeWithGrace(
    { delay: config.SHUTDOWN_TIMEOUT_MS + 5000, logger: log },
    async ({ signal, err }) => {
      closing = true;
      if (err) log.error({ err }, 'fatal error, shutting down');
      else log.info({ signal }, 'shutting down');
      await shutdown({
        app,
        lifecycle,
        // A signal while the database opens: it is closed once open, so no embedded server is left running.
        closeDatabase: async () => (db ?? (await opening?.catch(() => undefined)))?.close(),
        drainTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
        log,
      });
      log.info('stopped');
    },
  );
  // A worker drains when its primary says so (or is gone); a signal of its own may have come first.
  if (worker)
    onStopOrder(() => {
      if (!closing) void close();
    });

  try {
    // Loaded here, not with this module: a cluster primary forks its workers before loading them.
    // Migrations and the pool's sizing load pg: after the embedded server has started (embedded.ts).
    const { openDatabase } = await import('./db/index.js');
    const poolOptions = worker ? { max: (await import('./db/pool.js')).workerPoolMax(config.WORKERS) } : {};
    if (closing) return;
    opening = openDatabase(
      config,
      {
        info: (m) => log.info(m),
        warn: (m) => log.warn(m),
        error: (o, m) => log.error(o, m),
      },
      poolOptions,
    );
    db = await opening;
    // Stopping already (a signal during start-up): the shutdown closes what was opened.
    if (closing) return;
    // A worker's primary has migrated already.
    if (!worker) {
      const { migrate } = await import('./db/migrate.js');
      const { applied } = await migrate(db.pool);
      if (applied.length) log.info({ applied }, 'migrations applied');
    }
    const { buildApp } = await appModule;
    const peers = worker ? workerPeers() : undefined;
    app = await buildApp(config, {
      pool: db.pool,
      lifecycle,
      logger: log,
      peers,
      providerSummary: worker ? worker.announce : true,
    });
    if (closing) return;
    await app.listen({ port: config.PORT, host: config.HOST });
    const ms = Date.now() - started;
    if (worker) log.info({ ms }, 'worker ready');
    else {
      const { port } = app.server.address() as AddressInfo;
      // A hint only: a failed query does not stop a server that is up.
      const users = await usersExist(db.pool).catch(() => true);
      logReady(log, { url: serverUrl(config.HOST, port), host: config.HOST, ms, usersExist: users });
    }
  } catch (err) {
    // fatal: pino writes it at once, before the exit below.
    log.fatal(err instanceof Error ? err.message : err);
    await db?.close().catch(() => {});
    process.exit(1);
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of err.problems) process.stderr.write(`${line}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config);

  if (isClusterWorker()) {
    const appModule = loadApp();
    const start = await waitForStartOrder();
    const workerLog = log.child({ worker: start.index });
    await runInstance(
      {
        ...config,
        DATABASE_URL: start.databaseUrl,
        SECRET_KEY: start.secretKey,
        // Probes run on one worker only (still under the advisory lock, for other instances).
        PROBE_INTERVAL_SECONDS: start.index === 0 ? config.PROBE_INTERVAL_SECONDS : 0,
      },
      workerLog,
      start,
      appModule,
    );
    return;
  }
  if (config.WORKERS > 1 && cluster.isPrimary) {
    await runPrimary(config, log, { secretKey: resolveSecretKey(config) });
    return;
  }
  await runInstance(config, log);
}

await main();
