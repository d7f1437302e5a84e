import cluster, { type Worker } from 'node:cluster';
import type pino from 'pino';
import type { Config } from '../config/index.js';
import type { openDatabase } from '../db/index.js';
import { logReady, serverUrl, usersExist } from '../runtime/ready.js';
import { isMessage, sendToWorker } from './ipc.js';

/*
 * How a worker starts and stops, from both sides: the worker says hello, the
 * primary answers with its start order once the database is open and
 * migrated; the primary's stop order makes it drain.
 */

export interface WorkerStart {
  type: 'sift:start';
  /** 0..WORKERS-1; a replacement takes the index of the worker it replaces. */
  index: number;
  databaseUrl: string;
  secretKey: string;
  /** This worker logs what is said once per server (the provider summary): one worker at the first start. */
  announce: boolean;
}

export interface StopOrder {
  type: 'sift:stop';
}

/** A worker listens for its start order (a message sent before that would be lost). */
export interface Hello {
  type: 'sift:hello';
}

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

type Database = Awaited<ReturnType<typeof openDatabase>>;

/**
 * In the primary: the server's first start. Opens the database (starting the embedded server when
 * DATABASE_URL is unset), migrates it, sends each worker that says hello its start order, and says
 * `ready` once every worker listens.
 */
export class PrimaryStart {
  private readonly startedAt = Date.now();
  /** Being opened; then `db`. The shutdown closes either. */
  private opening: Promise<Database> | undefined;
  private db: Database | undefined;
  /** Whether the database had a user at start-up (the ready line's hint). */
  private usersExist = true;
  /** The database's URL once it is open and migrated: the workers' start orders wait for it. */
  private readonly databaseUrl = settleLater<string>();
  /** Every worker listens; rejected when one exits before that. */
  private readonly listening = settleLater<void>();

  constructor(
    private readonly config: Config,
    private readonly log: pino.Logger,
    private readonly secretKey: string,
  ) {
    this.databaseUrl.promise.catch(() => {});
    // Awaited once the database is open; a worker failing before that must not be an unhandled rejection.
    this.listening.promise.catch(() => {});
  }

  /**
   * Opens and migrates the database, then lets the workers start; resolves once they all listen,
   * or early when `stopping()` says the server began to stop meanwhile (the shutdown closes what
   * was opened).
   */
  async run(stopping: () => boolean): Promise<void> {
    // The database modules load after the fork, not before it (pg while the embedded server starts: embedded.ts).
    const { openDatabase } = await import('../db/index.js');
    if (stopping()) return;
    this.opening = openDatabase(this.config, {
      info: (m) => this.log.info(m),
      warn: (m) => this.log.warn(m),
      error: (o, m) => this.log.error(o, m),
    });
    const db = await this.opening;
    this.db = db;
    if (stopping()) return;
    const { migrate } = await import('../db/migrate.js');
    const { applied } = await migrate(db.pool);
    if (applied.length) this.log.info({ applied }, 'migrations applied');
    // A hint only: a failed query does not stop the start.
    this.usersExist = await usersExist(db.pool).catch(() => true);
    // The primary needs no connection of its own from here on (the embedded server keeps running).
    await db.pool.end();
    this.databaseUrl.resolve(db.url);
    await this.listening.promise;
  }

  /**
   * Sends a worker that said hello its start order, once the database is open (at once for a
   * replacement). `announce` is asked when the order is sent.
   */
  sendStartOrder(worker: Worker, index: number, announce: () => boolean): void {
    void this.databaseUrl.promise.then(
      (databaseUrl) => {
        const order: WorkerStart = {
          type: 'sift:start',
          index,
          databaseUrl,
          secretKey: this.secretKey,
          announce: announce(),
        };
        sendToWorker(worker, order, this.log);
      },
      () => {},
    );
  }

  /** Every worker listens: the ready line. */
  allListening(port: number): void {
    logReady(this.log, {
      url: serverUrl(this.config.HOST, port),
      host: this.config.HOST,
      ms: Date.now() - this.startedAt,
      workers: this.config.WORKERS,
      usersExist: this.usersExist,
    });
    this.listening.resolve();
  }

  /** A worker exited before every worker listened: `run` rejects once the database is open. */
  workerFailed(reason: Error): void {
    this.listening.reject(reason);
  }

  /** The start failed: no worker is sent a start order any more. */
  failed(reason: unknown): void {
    this.databaseUrl.reject(reason);
  }

  /** Closes the database: the one opened, or the one being opened, once it is (nothing when it failed). */
  async closeDatabase(): Promise<void> {
    await (this.db ?? (await this.opening?.catch(() => undefined)))?.close();
  }
}

/** A promise with its resolve and reject (Promise.withResolvers, which Node 20 lacks). */
function settleLater<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (reason: unknown) => void } {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
