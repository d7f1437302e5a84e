import cluster, { type Worker } from 'node:cluster';
import closeWithGrace from 'close-with-grace';
import type pino from 'pino';
import type { Config } from './config/index.js';
import type { openDatabase } from './db/index.js';
import { logReady, serverUrl, usersExist } from './runtime/ready.js';

/*
 * WORKERS > 1: several server processes on one port (node:cluster; the
 * primary hands incoming connections to the workers in turn).
 *
 * The primary serves no request. It forks the workers (they load their
 * modules meanwhile), opens the database (starting the embedded server when
 * DATABASE_URL is unset: the primary owns it), applies the migrations once,
 * then sends each worker its start order with the database URL and the
 * session secret.
 * Each worker is a full instance on that database, as separate instances
 * behind a load balancer are: keys, sessions, limits, usage and health live
 * in Postgres. What each keeps to itself is what instances keep anyway: its
 * search cache and key-lookup cache. Probes are scheduled on worker 0 only.
 * Through the primary, workers keep in step where a single process would
 * show one state (Peers):
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
 * usage and health), waits for them, then stops the embedded database.
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

interface StopOrder {
  type: 'sift:stop';
}

/** A worker listens for its start order (a message sent before that would be lost). */
interface Hello {
  type: 'sift:hello';
}

/*
 * Worker to worker, through the primary:
 * - a question (Ask) goes to every other worker (Question); each answers with
 *   what its answerer for that question returns (Answer); the primary sends
 *   the asker every answer (Answers) once all came or PEER_ANSWER_MS passed;
 * - a note (Tell) goes to every other worker (Told); nobody answers.
 */
interface Ask {
  type: 'sift:ask';
  id: number;
  question: string;
}
interface Question {
  type: 'sift:question';
  order: number;
  question: string;
}
interface Answer {
  type: 'sift:answer';
  order: number;
  answer: unknown;
}
interface Answers {
  type: 'sift:answers';
  id: number;
  answers: unknown[];
}
interface Tell {
  type: 'sift:tell';
  topic: string;
  body: unknown;
}
interface Told {
  type: 'sift:told';
  topic: string;
  body: unknown;
}

/** How long a worker waits for the others' answers before it goes on with those it has. */
export const PEER_ANSWER_MS = 500;

/** The other server processes of this cluster, as one worker sees them. */
export interface Peers {
  /** Every other worker's answer to `question` (those that answered within PEER_ANSWER_MS). */
  ask(question: string): Promise<unknown[]>;
  /** Answers the other workers' `question` with what `answerer` returns (null if it throws). */
  answer(question: string, answerer: () => unknown): void;
  /** Sends `body` to every other worker's `hear(topic)`. */
  tell(topic: string, body: unknown): void;
  hear(topic: string, listener: (body: unknown) => void): void;
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
  const waiting = new Map<number, (answers: unknown[]) => void>();
  const answerers = new Map<string, () => unknown>();
  const listeners = new Map<string, (body: unknown) => void>();
  const send = (msg: Ask | Answer | Tell) => {
    if (process.connected) process.send?.(msg);
  };
  process.on('message', (msg: unknown) => {
    if (isMessage<Answers>(msg, 'sift:answers')) return waiting.get(msg.id)?.(msg.answers);
    if (isMessage<Told>(msg, 'sift:told')) return listeners.get(msg.topic)?.(msg.body);
    if (!isMessage<Question>(msg, 'sift:question')) return;
    const answerer = answerers.get(msg.question);
    Promise.resolve()
      .then(() => (answerer ? answerer() : null))
      .catch(() => null)
      .then((answer) => send({ type: 'sift:answer', order: msg.order, answer }));
  });
  const peers: Peers = {
    ask(question) {
      if (!process.connected || !process.send) return Promise.resolve([]);
      const id = ++next;
      return new Promise((resolve) => {
        const done = (answers: unknown[]) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(answers);
        };
        // The primary answers within PEER_ANSWER_MS; this bounds a primary that is gone.
        const timer = setTimeout(() => done([]), PEER_ANSWER_MS + 100);
        waiting.set(id, done);
        send({ type: 'sift:ask', id, question });
      });
    },
    answer(question, answerer) {
      answerers.set(question, answerer);
    },
    tell(topic, body) {
      send({ type: 'sift:tell', topic, body });
    },
    hear(topic, listener) {
      listeners.set(topic, listener);
    },
  };
  return peers;
}

/** A worker that dies this soon after its start counts as a crash loop: the next start waits. */
const HEALTHY_AFTER_MS = 10_000;
const MAX_RESTART_PAUSE_MS = 30_000;

export async function runPrimary(config: Config, log: pino.Logger, options: { secretKey: string }): Promise<void> {
  const startedAt = Date.now();
  const count = config.WORKERS;
  /** `greeted`: the worker said hello, so it hears a stop order (before that, a message to it is lost). */
  const workers = new Map<number, { worker: Worker; forkedAt: number; exited: Promise<void>; greeted: boolean }>();
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let opening: ReturnType<typeof openDatabase> | undefined;
  let stopping = false;
  let quickDeaths = 0;
  let listening = 0;
  let ready = false;
  /** Whether the database had a user at start-up (the ready line's hint). */
  let users = true;
  let failStart: ((reason: Error) => void) | undefined;
  let allListening: () => void = () => {};
  let orders = 0;
  /** Relayed questions still waiting for workers: called with each answer. */
  const questions = new Map<number, (answer: unknown) => void>();

  /**
   * Sends to a worker whose channel is open. A write can still fail when the worker exits meanwhile
   * (EPIPE): Node then emits 'error' on the worker unless the send has a callback, and an 'error'
   * with no listener would end the primary (as an uncaught exception, exit 1) in the middle of a
   * shutdown, while the workers exit and one of them still has a note to pass on. The worker's exit
   * is handled where it exits.
   */
  function sendTo(worker: Worker, message: object): void {
    if (!worker.isConnected()) return;
    worker.send(message, undefined, undefined, (err: Error | null) => {
      if (err) log.debug({ err }, 'a message to a worker was not delivered');
    });
  }

  /** Asks every worker but `from`; sends `from` the answers when all came, or after PEER_ANSWER_MS. */
  function relayQuestion(from: Worker, id: number, question: string): void {
    const others = [...workers.values()].map((w) => w.worker).filter((w) => w !== from && w.isConnected());
    const order = ++orders;
    const answers: unknown[] = [];
    let answered = false;
    const reply = () => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      questions.delete(order);
      sendTo(from, { type: 'sift:answers', id, answers } satisfies Answers);
    };
    const timer = setTimeout(reply, PEER_ANSWER_MS);
    if (others.length === 0) {
      reply();
      return;
    }
    questions.set(order, (answer) => {
      answers.push(answer);
      if (answers.length === others.length) reply();
    });
    for (const w of others) sendTo(w, { type: 'sift:question', order, question } satisfies Question);
  }

  /** Passes a worker's note to every other worker. */
  function relayNote(from: Worker, topic: string, body: unknown): void {
    for (const { worker } of workers.values())
      if (worker !== from) sendTo(worker, { type: 'sift:told', topic, body } satisfies Told);
  }

  async function stopWorkers(timeoutMs: number): Promise<void> {
    const running = [...workers.values()];
    for (const { worker, greeted } of running) {
      // A worker still loading its modules has nothing to drain, and would not hear the order yet.
      if (greeted && worker.isConnected()) sendTo(worker, { type: 'sift:stop' } satisfies StopOrder);
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
    // A signal while the database opens: it is closed once open, so no embedded server is left running.
    await (db ?? (await opening?.catch(() => undefined)))?.close();
    log.info('stopped');
  });

  function fork(index: number): void {
    const worker = cluster.fork();
    const forkedAt = Date.now();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const entry = { worker, forkedAt, exited, greeted: false };
    workers.set(index, entry);
    // Any other failure of the worker's channel: logged, never an uncaught exception of the primary.
    worker.on('error', (err: Error) => log.warn({ err, worker: index }, 'worker channel error'));
    worker.on('message', (msg: unknown) => {
      if (isMessage<Tell>(msg, 'sift:tell')) return relayNote(worker, msg.topic, msg.body);
      if (isMessage<Ask>(msg, 'sift:ask')) return relayQuestion(worker, msg.id, msg.question);
      if (isMessage<Answer>(msg, 'sift:answer')) return questions.get(msg.order)?.(msg.answer);
      if (!isMessage<Hello>(msg, 'sift:hello')) return;
      entry.greeted = true;
      // A worker forked at start-up loads its modules while the database starts; it starts when that is done.
      void databaseReady.then(
        (url) => {
          sendTo(worker, {
            type: 'sift:start',
            index,
            databaseUrl: url,
            secretKey: options.secretKey,
            // A worker started later replaces one: the server said it all already.
            announce: index === 0 && !ready,
          } satisfies WorkerStart);
        },
        () => {},
      );
    });
    worker.once('listening', (address) => {
      listening++;
      if (!ready && listening === count) {
        ready = true;
        logReady(log, {
          url: serverUrl(config.HOST, address.port),
          host: config.HOST,
          ms: Date.now() - startedAt,
          workers: count,
          usersExist: users,
        });
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

  let databaseOpened: (url: string) => void = () => {};
  let databaseFailed: (err: unknown) => void = () => {};
  const databaseReady = new Promise<string>((resolve, reject) => {
    databaseOpened = resolve;
    databaseFailed = reject;
  });
  databaseReady.catch(() => {});

  try {
    const started = new Promise<void>((resolve, reject) => {
      allListening = resolve;
      failStart = reject;
    });
    // Awaited once the database is open; a worker failing before that must not be an unhandled rejection.
    started.catch(() => {});
    // Forked first: the workers load their modules while the database starts and migrates.
    for (let i = 0; i < count; i++) fork(i);
    log.info({ workers: count }, 'workers starting');
    // The database modules load after the fork, not before it (pg while the embedded server starts: embedded.ts).
    const { openDatabase } = await import('./db/index.js');
    if (stopping) return;
    opening = openDatabase(config, {
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      error: (o, m) => log.error(o, m),
    });
    db = await opening;
    // Stopping already (a signal during start-up): the shutdown closes what was opened.
    if (stopping) return;
    const { migrate } = await import('./db/migrate.js');
    const { applied } = await migrate(db.pool);
    if (applied.length) log.info({ applied }, 'migrations applied');
    // A hint only: a failed query does not stop the start.
    users = await usersExist(db.pool).catch(() => true);
    // The primary needs no connection of its own from here on (the embedded server keeps running).
    await db.pool.end();
    databaseOpened(db.url);
    await started;
    failStart = undefined;
  } catch (err) {
    stopping = true;
    databaseFailed(err);
    // fatal: pino writes it at once, before the exit below.
    log.fatal(err instanceof Error ? err.message : err);
    await stopWorkers(5000).catch(() => {});
    await db?.close().catch(() => {});
    process.exit(1);
  }
}
