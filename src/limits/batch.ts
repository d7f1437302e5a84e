import type pg from 'pg';
import { admitKeys, type KeyRequests, type Limits, type RateDecision, type UsageLookup } from './rate-limiter.js';

/*
 * One admission statement in flight per instance, for every key at once.
 *
 * Requests that arrive while no statement is in flight are gathered until
 * the end of the current turn of the event loop (setImmediate: every socket
 * read in this turn has had its say) and sent together; requests that arrive
 * while a statement is in flight wait and are decided together by the next
 * one. Within a key, requests are decided in arrival order (a key's later
 * requests are never in an earlier statement than its earlier ones, so none
 * can take an earlier one's slot). One statement then decides many keys: its
 * fixed cost (round trip, transaction, the driver's work in this process) is
 * paid once per batch rather than once per request, whether the load comes
 * from one heavy key or a thousand light ones, and one key's concurrent
 * requests never queue on its row lock one by one.
 *
 * When a statement fails, its requests fail with it, and so do the requests
 * that queued behind it: sent next, they would wait as long again on a
 * database that just did not answer (each API answer stays within one
 * statement's bound). Later requests are decided afresh.
 */

/** More than this many waiting requests of one key are split over several statements. */
export const MAX_BATCH = 256;
/** More keys than this wait for the next statement. */
export const MAX_KEYS_PER_STATEMENT = 512;

interface Waiter {
  usage: UsageLookup | undefined;
  resolve(decision: RateDecision): void;
  reject(err: unknown): void;
}

export interface AdmissionBatcher {
  admit(keyId: number, usage?: UsageLookup): Promise<RateDecision>;
}

export function createAdmissionBatcher(pool: pg.Pool, limits: Limits): AdmissionBatcher {
  /** Waiting requests by key, keys in the order their first waiting request arrived. */
  let waiting = new Map<number, Waiter[]>();
  /** A statement is in flight, or about to be sent. */
  let busy = false;

  /** Takes the next statement's share of the waiting requests. */
  function take(): { keys: KeyRequests[]; waiters: Waiter[][] } {
    const keys: KeyRequests[] = [];
    const waiters: Waiter[][] = [];
    for (const [keyId, queue] of waiting) {
      if (keys.length === MAX_KEYS_PER_STATEMENT) break;
      const batch = queue.splice(0, MAX_BATCH);
      if (queue.length === 0) waiting.delete(keyId);
      keys.push({ keyId, wanted: batch.length, usage: batch.find((w) => w.usage)?.usage });
      waiters.push(batch);
    }
    return { keys, waiters };
  }

  async function drain(): Promise<void> {
    while (waiting.size > 0) {
      const { keys, waiters } = take();
      try {
        const decisions = await admitKeys(pool, limits, keys);
        waiters.forEach((batch, k) => {
          const usage = keys[k]!.usage;
          batch.forEach((w, i) => {
            const d = decisions[k]![i]!;
            w.resolve(w.usage || !usage ? d : { ...d, persistedSearches: null });
          });
        });
      } catch (err) {
        for (const batch of waiters) for (const w of batch) w.reject(err);
        const behind = waiting;
        waiting = new Map();
        for (const queue of behind.values()) for (const w of queue) w.reject(err);
      }
    }
    busy = false;
  }

  return {
    admit(keyId, usage) {
      return new Promise<RateDecision>((resolve, reject) => {
        const queue = waiting.get(keyId);
        if (queue) queue.push({ usage, resolve, reject });
        else waiting.set(keyId, [{ usage, resolve, reject }]);
        if (busy) return;
        busy = true;
        setImmediate(() => void drain());
      });
    },
  };
}
