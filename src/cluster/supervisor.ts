import cluster, { type Worker } from 'node:cluster';
import type pino from 'pino';
import { isMessage, sendToWorker } from './ipc.js';
import type { Hello, StopOrder } from './start-up.js';

/* The primary's workers: forked, replaced when one dies, drained on shutdown (why: primary.ts). */

/** A worker that dies this soon after its start counts as a crash loop: the next start waits. */
const HEALTHY_AFTER_MS = 10_000;
const MAX_RESTART_PAUSE_MS = 30_000;

/** What the rest of the primary does with its workers. */
export interface SupervisorHooks {
  /** A worker (at the first start, or a replacement) said hello: it listens for its start order now. */
  greeted(worker: Worker, index: number): void;
  /** Any other message of a worker's. */
  message(worker: Worker, msg: unknown): void;
  /** Every worker of the first start listens (`port`: where). */
  allListening(port: number): void;
  /** A worker exited before that: the server cannot start. */
  failedToStart(reason: Error): void;
}

interface SupervisedWorker {
  worker: Worker;
  forkedAt: number;
  exited: Promise<void>;
  /** The worker said hello, so it hears a stop order (before that, a message to it is lost). */
  greeted: boolean;
}

export class Supervisor {
  /** The workers by index, 0..count-1; a replacement takes the index of the worker it replaces. */
  private readonly running = new Map<number, SupervisedWorker>();
  /** Every worker of the first start listened: from then on, a worker that dies is replaced. */
  private started = false;
  /** The server is stopping (a signal, or a failed start): nothing is replaced. */
  private stopRequested = false;
  /** Workers of the first start that listen. */
  private listening = 0;
  /** Workers in a row that died before HEALTHY_AFTER_MS: sets the pause before the next start. */
  private quickDeaths = 0;

  constructor(
    private readonly count: number,
    private readonly log: pino.Logger,
    private readonly hooks: SupervisorHooks,
  ) {}

  get ready(): boolean {
    return this.started;
  }

  get stopping(): boolean {
    return this.stopRequested;
  }

  get size(): number {
    return this.running.size;
  }

  workers(): Worker[] {
    return [...this.running.values()].map((w) => w.worker);
  }

  forkAll(): void {
    for (let i = 0; i < this.count; i++) this.fork(i);
  }

  /** Asks every worker to drain and waits for them; kills those still running after `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopRequested = true;
    const running = [...this.running.values()];
    for (const { worker, greeted } of running) {
      // A worker still loading its modules has nothing to drain, and would not hear the order yet.
      if (greeted && worker.isConnected()) sendToWorker(worker, { type: 'sift:stop' } satisfies StopOrder, this.log);
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
      this.log.warn({ timeoutMs }, 'workers did not stop in time; killing them');
      for (const { worker } of running) worker.process.kill('SIGKILL');
      await all;
    }
  }

  private fork(index: number): void {
    const worker = cluster.fork();
    const forkedAt = Date.now();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const entry: SupervisedWorker = { worker, forkedAt, exited, greeted: false };
    this.running.set(index, entry);
    // Any other failure of the worker's channel: logged, never an uncaught exception of the primary.
    worker.on('error', (err: Error) => this.log.warn({ err, worker: index }, 'worker channel error'));
    worker.on('message', (msg: unknown) => {
      if (!isMessage<Hello>(msg, 'sift:hello')) {
        this.hooks.message(worker, msg);
        return;
      }
      entry.greeted = true;
      this.hooks.greeted(worker, index);
    });
    worker.once('listening', (address) => {
      this.listening++;
      if (!this.started && this.listening === this.count) {
        this.started = true;
        this.hooks.allListening(address.port);
      }
    });
    worker.once('exit', (code, signal) => {
      if (this.running.get(index)?.worker === worker) this.running.delete(index);
      if (this.stopRequested) return;
      if (!this.started) {
        this.hooks.failedToStart(new Error(`worker ${index} exited during start-up (code ${code ?? signal})`));
        return;
      }
      const ranMs = Date.now() - forkedAt;
      this.quickDeaths = ranMs < HEALTHY_AFTER_MS ? this.quickDeaths + 1 : 0;
      const pause = this.quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_PAUSE_MS, 1000 * 2 ** (this.quickDeaths - 1));
      this.log.error({ worker: index, code, signal, ranMs, restartInMs: pause }, 'worker exited; starting another');
      setTimeout(() => {
        if (!this.stopRequested) this.fork(index);
      }, pause).unref();
    });
  }
}
