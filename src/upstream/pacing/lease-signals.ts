import pg from 'pg';

/*
 * Tells a call waiting for a concurrency slot that one may have freed: the
 * pacing statements announce every freed lease on the `sift_pacing` channel
 * (migrations/0014_provider_budget_shares.sql), whichever process held it,
 * and a release in this process wakes its own waiters at once. A waiter
 * waits once, for that or its own bound (the oldest lease's expiry, its
 * deadline), then asks the database again: never a polling loop.
 *
 * One connection per process LISTENs, opened the first time a call waits.
 * While it is lost, waiters still end at their bound; it is opened again by
 * the next wait.
 */

export const PACING_CHANNEL = 'sift_pacing';

export interface LeaseSignals {
  /** Settles when a lease of `provider` frees, or after `ms`; rejects with the signal's reason on abort. */
  wait(provider: string, ms: number, signal?: AbortSignal): Promise<void>;
  /** Wakes this process's waiters for `provider` (a lease this process released). */
  freed(provider: string): void;
  close(): Promise<void>;
}

export function createLeaseSignals(pool: pg.Pool, log?: { warn(obj: unknown, msg?: string): void }): LeaseSignals {
  const waiters = new Map<string, Set<() => void>>();
  let client: pg.Client | null = null;
  let opening: Promise<void> | null = null;
  let closed = false;

  function freed(provider: string): void {
    const set = waiters.get(provider);
    if (!set) return;
    waiters.delete(provider);
    for (const wake of set) wake();
  }

  function listen(): void {
    if (client || opening || closed) return;
    const c = new pg.Client({ ...pool.options, application_name: `sift:${process.pid}:pacing-listener` });
    const drop = (err: unknown) => {
      if (client === c) client = null;
      c.removeAllListeners('notification');
      c.end().catch(() => undefined);
      if (!closed) log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'pacing notifications lost');
    };
    c.on('error', drop);
    c.on('notification', (message) => {
      if (message.channel === PACING_CHANNEL && message.payload) freed(message.payload);
    });
    opening = c
      .connect()
      .then(() => c.query(`LISTEN ${PACING_CHANNEL}`))
      .then(
        () => {
          if (closed) void c.end().catch(() => undefined);
          else client = c;
        },
        (err: unknown) => drop(err),
      )
      .finally(() => {
        opening = null;
      });
  }

  function wait(provider: string, ms: number, signal?: AbortSignal): Promise<void> {
    listen();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let set = waiters.get(provider);
      if (!set) waiters.set(provider, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        set.delete(wake);
      };
      const wake = () => {
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal?.reason);
      };
      const timer = setTimeout(wake, Math.max(0, ms));
      set.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  return {
    wait,
    freed,
    async close() {
      closed = true;
      await opening?.catch(() => undefined);
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
