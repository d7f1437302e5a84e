import closeWithGrace from 'close-with-grace';
import type pino from 'pino';
import type { Config } from '../config/index.js';
import { PeerRelay } from './peers.js';
import { PrimaryStart } from './start-up.js';
import { Supervisor } from './supervisor.js';

/*
 * WORKERS > 1: several server processes on one port (node:cluster; the
 * primary hands incoming connections to the workers in turn).
 *
 * The primary serves no request. It forks the workers (they load their
 * modules meanwhile), opens the database (starting the embedded server when
 * DATABASE_URL is unset: the primary owns it), applies the migrations once,
 * then sends each worker its start order with the database URL and the
 * session secret (start-up.ts).
 * Each worker is a full instance on that database, as separate instances
 * behind a load balancer are: keys, sessions, limits, usage and health live
 * in Postgres. What each keeps to itself is what instances keep anyway: its
 * search cache and key-lookup cache. Probes are scheduled on worker 0 only.
 * Through the primary, workers keep in step where a single process would
 * show one state (Peers, peers.ts):
 * - usage: each worker writes its buffered counts every second; a worker
 *   about to show usage (GET /api/v1/key/, the keys page) first has the
 *   others write theirs, so the count includes searches another worker
 *   answered a moment ago;
 * - provider suspensions: each worker tells the others the failures and
 *   recoveries it sees (suspension.ts), so all suspend a provider together;
 * - metrics: the worker that answers a scrape adds the others' series
 *   (metrics/index.ts).
 *
 * A worker that dies is replaced (at once if it had run for a while, else
 * after a growing pause, so a worker that cannot start does not spin). A
 * worker that fails during the first start stops the whole server (exit 1),
 * as a single process would. On SIGTERM or SIGINT the primary asks every
 * worker to drain (each stops accepting, finishes its requests, flushes
 * usage and health), waits for them, then stops the embedded database
 * (supervisor.ts).
 */

export async function runPrimary(config: Config, log: pino.Logger, options: { secretKey: string }): Promise<void> {
  const start = new PrimaryStart(config, log, options.secretKey);
  const supervisor: Supervisor = new Supervisor(config.WORKERS, log, {
    // A worker started later replaces one: the server said it all already.
    greeted: (worker, index) => start.sendStartOrder(worker, index, () => index === 0 && !supervisor.ready),
    message: (worker, msg) => relay.relay(worker, msg),
    allListening: (port) => start.allListening(port),
    failedToStart: (reason) => start.workerFailed(reason),
  });
  const relay = new PeerRelay(() => supervisor.workers(), log);

  // Registered first, so a signal during start-up still stops the workers and the embedded server.
  closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS + 10_000, logger: log }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'fatal error, shutting down');
    else log.info({ signal, workers: supervisor.size }, 'shutting down: draining the workers');
    await supervisor.stop(config.SHUTDOWN_TIMEOUT_MS + 5000);
    // A signal while the database opens: it is closed once open, so no embedded server is left running.
    await start.closeDatabase();
    log.info('stopped');
  });

  try {
    // Forked first: the workers load their modules while the database starts and migrates.
    supervisor.forkAll();
    log.info({ workers: config.WORKERS }, 'workers starting');
    await start.run(() => supervisor.stopping);
  } catch (err) {
    start.failed(err);
    // fatal: pino writes it at once, before the exit below.
    log.fatal(err instanceof Error ? err.message : err);
    await supervisor.stop(5000).catch(() => {});
    await start.closeDatabase().catch(() => {});
    process.exit(1);
  }
}
