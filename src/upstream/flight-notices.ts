import pg from 'pg';
import { withQueryTimeout } from '../db/pool.js';

/*
 * How a process hears that another one's flight ended (shared-cache.ts): one dedicated connection
 * per process LISTENs on `sift_upstream_cache`, where ending a flight that someone waits for
 * notifies its key (migrations/0015). A waiter registers before it asks the database, so no notice
 * can pass between its question and its wait.
 *
 * While the connection is being opened or is lost, notices are not heard: waiters then wait once,
 * until the flight expires or their deadline, whichever is first. When it listens again, every
 * waiter is woken (notices may have been missed) and asks again. A lost connection is opened again
 * with a growing pause; one that stops answering is noticed by a ping.
 */

export const CACHE_CHANNEL = 'sift_upstream_cache';
const PING_INTERVAL_MS = 15_000;
const PING_TIMEOUT_MS = 5_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

export interface FlightNotices {
  /** Whether notices are heard right now. */
  readonly listening: boolean;
  /** Interest in `keyHex`, taken before asking the database about it. */
  watch(keyHex: string): FlightWatch;
  close(): Promise<void>;
}

export interface FlightWatch {
  /**
   * Resolves when the flight of the key ends (a notice, or the connection coming back), or after
   * `ms`, or when `signal` aborts; whichever is first. Waits once.
   */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  /** No longer interested (an answer or a claim came instead). */
  done(): void;
}

export function listenForFlights(pool: pg.Pool, log?: { warn(obj: unknown, msg?: string): void }): FlightNotices {
  const config: pg.ClientConfig = { ...pool.options, application_name: `sift:${process.pid}:cache-listener` };
  /** Per key, the wake-ups of its waiters (and of those registered but not yet waiting). */
  const watchers = new Map<string, Set<() => void>>();
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let pause = FIRST_RETRY_MS;

  function wakeAll(): void {
    for (const set of watchers.values()) for (const wake of set) wake();
  }

  function open(): void {
    retry = undefined;
    if (closed) return;
    const c = new pg.Client(config);
    client = c;
    let gone = false;
    const drop = (err: unknown): void => {
      if (gone) return;
      gone = true;
      if (client === c) {
        client = null;
        listening = false;
      }
      c.end().catch(() => undefined);
      if (closed) return;
      log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'shared cache: flight notices lost');
      retry = setTimeout(open, pause).unref();
      pause = Math.min(pause * 2, MAX_RETRY_MS);
    };
    c.on('error', drop);
    c.on('end', () => drop(new Error('connection closed')));
    c.on('notification', (message) => {
      if (gone || message.channel !== CACHE_CHANNEL || !message.payload) return;
      for (const wake of watchers.get(message.payload) ?? []) wake();
    });
    c.connect()
      .then(() => c.query(`LISTEN ${CACHE_CHANNEL}`))
      .then(() => {
        if (gone || closed) return;
        listening = true;
        pause = FIRST_RETRY_MS;
        // Flights that ended while nobody listened were not heard of.
        wakeAll();
      }, drop);
    const ping = setInterval(() => {
      if (gone) {
        clearInterval(ping);
        return;
      }
      if (listening) c.query(withQueryTimeout({ text: 'SELECT 1' }, PING_TIMEOUT_MS)).catch(drop);
    }, PING_INTERVAL_MS).unref();
  }

  open();

  return {
    get listening() {
      return listening;
    },
    watch(keyHex) {
      let woken = false;
      let wake: (() => void) | null = null;
      const onWake = () => {
        woken = true;
        wake?.();
      };
      let set = watchers.get(keyHex);
      if (!set) watchers.set(keyHex, (set = new Set()));
      set.add(onWake);
      const done = () => {
        set.delete(onWake);
        if (set.size === 0 && watchers.get(keyHex) === set) watchers.delete(keyHex);
      };
      return {
        wait(ms, signal) {
          if (woken || signal?.aborted) return Promise.resolve();
          return new Promise<void>((resolve) => {
            const finish = () => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', finish);
              wake = null;
              resolve();
            };
            const timer = setTimeout(finish, Math.max(0, ms));
            signal?.addEventListener('abort', finish, { once: true });
            wake = finish;
          });
        },
        done,
      };
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      listening = false;
      wakeAll();
      await c?.end().catch(() => undefined);
    },
  };
}
