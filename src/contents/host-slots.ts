import type pg from 'pg';
import { ContentsFailure } from './fetch/reasons.js';

/*
 * At most CONTENTS_HOST_CONCURRENCY fetches of one site at once, across every process and instance:
 * each fetch holds a lease taken by the pacing statement (acquire_provider_call, the one every
 * paced upstream call takes its slot with), under the name `contents <host>`, given back when the
 * fetch ends and expiring by itself if its holder dies. A page fetch takes hundreds of
 * milliseconds, so its two statements are a small part of it.
 *
 * While the site's slots are all taken the read waits, re-asking at growing intervals, until a
 * slot frees or its deadline (the read's signal) passes: then it fails as `timeout`.
 */

export interface HostSlots {
  /** Waits for a slot of `host`; resolves with its release. Rejects with ContentsFailure `timeout`. */
  acquire(host: string, signal: AbortSignal): Promise<() => void>;
}

export interface HostSlotsOptions {
  concurrency: number;
  /** The longest a fetch may hold its slot (its timeout and a margin), ms. */
  holdMs: number;
  log?: { warn(obj: unknown, msg?: string): void };
}

const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 400;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function createHostSlots(pool: pg.Pool, options: HostSlotsOptions): HostSlots {
  const release = (name: string, lease: string) => () => {
    pool
      .query('SELECT report_provider_call($1, $2, false, NULL, NULL, NULL, NULL, NULL)', [name, lease])
      .catch((err: unknown) => options.log?.warn({ err }, 'contents: a host slot was not given back (it expires)'));
  };

  return {
    async acquire(host, signal) {
      const name = `contents ${host.toLowerCase()}`;
      let retryMs = FIRST_RETRY_MS;
      for (;;) {
        if (signal.aborted)
          throw new ContentsFailure('timeout', 'the site was busy with other reads until the deadline');
        const { rows } = await pool.query<{ outcome: string; lease: string | null }>(
          'SELECT outcome, lease FROM acquire_provider_call($1, NULL, false, NULL, $2, $3, NULL, NULL, NULL, NULL, 0)',
          [name, options.concurrency, options.holdMs],
        );
        const row = rows[0];
        if (row?.outcome === 'ok' && row.lease !== null) return release(name, row.lease);
        try {
          await pause(retryMs, signal);
        } catch {
          throw new ContentsFailure('timeout', 'the site was busy with other reads until the deadline');
        }
        retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
      }
    },
  };
}
