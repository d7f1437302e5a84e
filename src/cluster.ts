import cluster, { type Worker } from 'node:cluster';
import closeWithGrace from 'close-with-grace';
import type pino from 'pino';
import type { Config } from './config/index.js';
import { openDatabase } from './db/index.js';
import { migrate } from './db/migrate.js';
import { writeLogNow } from './logging.js';

/*
 * WORKERS > 1: several server processes on one port (node:cluster; the
 * primary hands incoming connections to the workers in turn).
 *
 * The primary serves no request. It opens the database (starting the
 * embedded server when DATABASE_URL is unset: the primary owns it), applies
 * the migrations once, settles the session secret, and forks the workers.
 * Each worker is a full instance on that database, as separate instances
 * behind a load balancer are: keys, sessions, limits, usage and health live
 * in Postgres. What each keeps to itself is what instances keep anyway: its
 * search cache, key-lookup cache and provider suspensions. Probes are
 * scheduled on worker 0 only. Each worker writes its buffered usage counts
 * every second; a worker about to show usage (GET /api/v1/key/, the keys
 * page) first has the others write theirs (Peers.flushUsage, relayed by the
 * primary, bounded by PEER_FLUSH_MS), so the count includes searches another
 * worker answered a moment ago.
 *
 * A worker that dies is replaced (at once if it had run for a while, else
 * after a growing pause, so a worker that cannot start does not spin). A
 * worker that fails during the first start stops the whole server (exit 1),
 * as a single process would. On SIGTERM or SIGINT the primary asks every
 * worker to drain (each stops accepting, finishes its requests, flushes
 * usage and health), waits for them, then stops the embedded database.
 */

export interface WorkerStart {
  type: 'sift:start';
  /** 0..WORKERS-1; a replacement takes the index of the worker it replaces. */
  index: number;
  databaseUrl: string;
  secretKey: string;
}

interface StopOrder {
  type: 'sift:stop';
}

/** A worker listens for its start order (a message sent before that would be lost). */
interface Hello {
  type: 'sift:hello';
}

/** Worker to primary: have the other workers write their usage; answered by UsageFlushed with the same id. */
interface FlushUsageRequest {
  type: 'sift:flush-usage';
  id: number;
}
/** Primary to worker: the others have written theirs (or PEER_FLUSH_MS passed). */
interface UsageFlushed {
  type: 'sift:usage-flushed';
  id: number;
}
/** Primary to worker: write your usage now, then say FlushedHere with this order. */
interface FlushUsageOrder {
  type: 'sift:flush-usage-now';
  order: number;
}
interface FlushedHere {
  type: 'sift:usage-flushed-here';
  order: number;
}

/** How long a worker waits for the others' usage writes before it reads anyway. */
export const PEER_FLUSH_MS = 500;

/** The other server processes of this cluster, as one worker sees them. */
export interface Peers {
  /** Has every other worker write its buffered usage counts; resolves when they did (at most PEER_FLUSH_MS). */
  flushUsage(): Promise<void>;
}

const isMessage = <T extends { type: string }>(msg: unknown, type: T['type']): msg is T =>
  typeof msg === 'object' && msg !== null && (msg as { type?: unknown }).type === type;

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

/** In a worker: what the primary sends when the worker says hello. Told to stop before that: exits. */
export function waitForStartOrder(): Promise<WorkerStart> {
  return new Promise((resolve) => {
    const onMessage = (msg: unknown) => {
      if (isMessage<StopOrder>(msg, 'sift:stop')) process.exit(0);
      if (!isMessage<WorkerStart>(msg, 'sift:start')) return;
      process.off('message', onMessage);
      process.off('disconnect', orphaned);
      resolve(msg);
    };
    const orphaned = () => process.exit(1);
    process.on('message', onMessage);
    process.once('disconnect', orphaned);
    process.send?.({ type: 'sift:hello' } satisfies Hello);
  });
}

/**
 * In a worker: runs `stop` when the primary asks (sift:stop) or is gone (the
 * IPC channel closed), unless the worker is stopping already.
 */
export function onStopOrder(stop: () => void): void {
  process.on('message', (msg: unknown) => {
    if (isMessage<StopOrder>(msg, 'sift:stop')) stop();
  });
  process.once('disconnect', stop);
}

/** In a worker: the peers, through the primary. */
export function workerPeers(): Peers {
  let next = 0;
  const waiting = new Map<number, () => void>();
  process.on('message', (msg: unknown) => {
    if (!isMessage<UsageFlushed>(msg, 'sift:usage-flushed')) return;
    waiting.get(msg.id)?.();
  });
  return {
    flushUsage() {
      if (!process.connected || !process.send) return Promise.resolve();
      const id = ++next;
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        };
        const timer = setTimeout(done, PEER_FLUSH_MS);
        waiting.set(id, done);
        process.send!({ type: 'sift:flush-usage', id } satisfies FlushUsageRequest);
      });
    },
  };
}

/** In a worker: writes its usage when the primary relays another worker's request. */
export function answerUsageFlushes(flush: () => Promise<void>): void {
  process.on('message', (msg: unknown) => {
    if (!isMessage<FlushUsageOrder>(msg, 'sift:flush-usage-now')) return;
    flush()
      .catch(() => {})
      .finally(() => {
        if (process.connected)
          process.send?.({ type: 'sift:usage-flushed-here', order: msg.order } satisfies FlushedHere);
      });
  });
}

/** A worker that dies this soon after its start counts as a crash loop: the next start waits. */
const HEALTHY_AFTER_MS = 10_000;
const MAX_RESTART_PAUSE_MS = 30_000;

export async function runPrimary(config: Config, log: pino.Logger, options: { secretKey: string }): Promise<void> {
  const startedAt = Date.now();
  const count = config.WORKERS;
  const workers = new Map<number, { worker: Worker; forkedAt: number; exited: Promise<void> }>();
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let stopping = false;
  let quickDeaths = 0;
  let listening = 0;
  let ready = false;
  let failStart: ((reason: Error) => void) | undefined;
  let allListening: () => void = () => {};
  let orders = 0;
  /** Relayed flush orders still waiting for workers: called with each worker that answered. */
  const flushOrders = new Map<number, () => void>();

  /** Asks every worker but `from` to write its usage; answers `from` when all did, or after PEER_FLUSH_MS. */
  function relayUsageFlush(from: Worker, id: number): void {
    const others = [...workers.values()].map((w) => w.worker).filter((w) => w !== from && w.isConnected());
    const order = ++orders;
    let left = others.length;
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      flushOrders.delete(order);
      if (from.isConnected()) from.send({ type: 'sift:usage-flushed', id } satisfies UsageFlushed);
    };
    const timer = setTimeout(answer, PEER_FLUSH_MS);
    if (left === 0) {
      answer();
      return;
    }
    flushOrders.set(order, () => {
      if (--left === 0) answer();
    });
    for (const w of others) w.send({ type: 'sift:flush-usage-now', order } satisfies FlushUsageOrder);
  }

  async function stopWorkers(timeoutMs: number): Promise<void> {
    const running = [...workers.values()];
    for (const { worker } of running) {
      if (worker.isConnected()) worker.send({ type: 'sift:stop' } satisfies StopOrder);
      else worker.process.kill('SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    const all = Promise.all(running.map((w) => w.exited));
    const inTime = await Promise.race([
      all.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!inTime) {
      log.warn({ timeoutMs }, 'workers did not stop in time; killing them');
      for (const { worker } of running) worker.process.kill('SIGKILL');
      await all;
    }
  }

  // Registered first, so a signal during start-up still stops the workers and the embedded server.
  closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS + 10_000, logger: log }, async ({ signal, err }) => {
    stopping = true;
    if (err) log.error({ err }, 'fatal error, shutting down');
    else log.info({ signal, workers: workers.size }, 'shutting down: draining the workers');
    await stopWorkers(config.SHUTDOWN_TIMEOUT_MS + 5000);
    await db?.close();
    log.info('stopped');
  });

  function fork(index: number): void {
    const worker = cluster.fork();
    const forkedAt = Date.now();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    workers.set(index, { worker, forkedAt, exited });
    worker.on('message', (msg: unknown) => {
      if (isMessage<FlushUsageRequest>(msg, 'sift:flush-usage')) return relayUsageFlush(worker, msg.id);
      if (isMessage<FlushedHere>(msg, 'sift:usage-flushed-here')) return flushOrders.get(msg.order)?.();
      if (!isMessage<Hello>(msg, 'sift:hello')) return;
      worker.send({
        type: 'sift:start',
        index,
        databaseUrl: db!.url,
        secretKey: options.secretKey,
      } satisfies WorkerStart);
    });
    worker.once('listening', () => {
      listening++;
      if (!ready && listening === count) {
        ready = true;
        log.info({ ms: Date.now() - startedAt, workers: count }, 'ready');
        writeLogNow(log);
        allListening();
      }
    });
    worker.once('exit', (code, signal) => {
      if (workers.get(index)?.worker === worker) workers.delete(index);
      if (stopping) return;
      if (!ready) {
        failStart?.(new Error(`worker ${index} exited during start-up (code ${code ?? signal})`));
        return;
      }
      const ranMs = Date.now() - forkedAt;
      quickDeaths = ranMs < HEALTHY_AFTER_MS ? quickDeaths + 1 : 0;
      const pause = quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_PAUSE_MS, 1000 * 2 ** (quickDeaths - 1));
      log.error({ worker: index, code, signal, ranMs, restartInMs: pause }, 'worker exited; starting another');
      setTimeout(() => {
        if (!stopping) fork(index);
      }, pause).unref();
    });
  }

  try {
    db = await openDatabase(config, {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      error: (o, m) => log.error(o, m),
    });
    const { applied } = await migrate(db.pool);
    if (applied.length) log.info({ applied }, 'migrations applied');
    // The primary needs no connection of its own from here on (the embedded server keeps running).
    await db.pool.end();
    const started = new Promise<void>((resolve, reject) => {
      allListening = resolve;
      failStart = reject;
    });
    for (let i = 0; i < count; i++) fork(i);
    log.info({ workers: count }, 'workers starting');
    await started;
    failStart = undefined;
  } catch (err) {
    stopping = true;
    log.error(err instanceof Error ? err.message : err);
    await stopWorkers(5000).catch(() => {});
    await db?.close().catch(() => {});
    process.exit(1);
  }
}
