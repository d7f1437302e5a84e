import type pg from 'pg';
import { createLeaseSignals } from '../upstream/pacing/lease-signals.js';
import { ContentsFailure } from './fetch/reasons.js';

/*
 * At most CONTENTS_HOST_CONCURRENCY fetches of one site at once, across every process and instance:
 * each fetch holds a lease taken by the pacing statement (acquire_provider_call, the one every
 * paced upstream call takes its slot with), under the name `contents <host>`, given back when the
 * fetch ends (report_provider_call) and expiring by itself if its holder dies. A page fetch takes
 * hundreds of milliseconds, so its two statements are a small part of it.
 *
 * While the site's slots are all taken the read waits once, for a freed lease (announced on the
 * pacing channel by whichever process frees it: pacing/lease-signals.ts), the oldest lease's expiry,
 * a second at most or its own deadline, then asks again; past its deadline it fails as `timeout`.
 */

export interface HostSlots {
  /** Waits for a slot of `host`; resolves with its release. Rejects with ContentsFailure `timeout`. */
  acquire(host: string, signal: AbortSignal): Promise<() => void>;
  close(): Promise<void>;
}

export interface HostSlotsOptions {
  concurrency: number;
  /** The longest a fetch may hold its slot (its timeout and a margin), ms. */
  holdMs: number;
  log?: { warn(obj: unknown, msg?: string): void };
}

const BUSY = 'the site was busy with other reads until the deadline';
/**
 * The longest one wait lasts before the read asks again: a lease another process freed just before
 * this one started listening is announced to nobody, and must not hold the read for a lease's life.
 */
const MAX_WAIT_MS = 1000;

export function createHostSlots(pool: pg.Pool, options: HostSlotsOptions): HostSlots {
  const signals = createLeaseSignals(pool, options.log);
  /** Leases this process freed, per site: a read that saw its site busy asks again at once if one went meanwhile. */
  const freedCount = new Map<string, number>();
  const release = (name: string, lease: string) => () => {
    freedCount.set(name, (freedCount.get(name) ?? 0) + 1);
    signals.freed(name);
    pool
      .query('SELECT report_provider_call($1, $2, false, NULL, NULL, NULL, NULL, NULL)', [name, lease])
      .catch((err: unknown) => options.log?.warn({ err }, 'contents: a host slot was not given back (it expires)'));
  };

  return {
    async acquire(host, signal) {
      const name = `contents ${host.toLowerCase()}`;
      for (;;) {
        if (signal.aborted) throw new ContentsFailure('timeout', BUSY);
        const freedBefore = freedCount.get(name) ?? 0;
        const { rows } = await pool.query<{ outcome: string; lease: string | null; retry_ms: number }>(
          'SELECT outcome, lease, retry_ms FROM acquire_provider_call($1, NULL, false, NULL, $2, $3, NULL, NULL, NULL, NULL, 0)',
          [name, options.concurrency, options.holdMs],
        );
        const row = rows[0];
        if (row?.outcome === 'ok' && row.lease !== null) return release(name, row.lease);
        if ((freedCount.get(name) ?? 0) !== freedBefore) continue;
        try {
          await signals.wait(name, Math.min(MAX_WAIT_MS, Math.max(1, row?.retry_ms ?? MAX_WAIT_MS)), signal);
        } catch {
          throw new ContentsFailure('timeout', BUSY);
        }
      }
    },
    close: () => signals.close(),
  };
}
