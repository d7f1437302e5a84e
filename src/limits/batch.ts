import type pg from 'pg';
import { admitBatch, type Limits, type RateDecision, type UsageLookup } from './rate-limiter.js';

/*
 * One admission statement in flight per key on this instance. The first
 * request of a key is decided at once; requests of the same key that arrive
 * while a decision is in flight wait and are decided together by the next
 * statement (in arrival order, so none can take an earlier one's slot), or
 * fail with the one in flight when that one fails. One
 * heavy client then costs a statement per batch rather than one per request,
 * and its requests never queue on the key's row lock one by one.
 */

/** More than this many waiting requests of one key are split over several statements. */
export const MAX_BATCH = 256;

interface Waiter {
  usage: UsageLookup | undefined;
  resolve(decision: RateDecision): void;
  reject(err: unknown): void;
}

export interface AdmissionBatcher {
  admit(keyId: number, usage?: UsageLookup): Promise<RateDecision>;
}

export function createAdmissionBatcher(pool: pg.Pool, limits: Limits): AdmissionBatcher {
  const waiting = new Map<number, Waiter[]>();

  async function drain(keyId: number, queue: Waiter[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      const usage = batch.find((w) => w.usage)?.usage;
      try {
        const decisions = await admitBatch(pool, keyId, limits, batch.length, usage);
        batch.forEach((w, i) => {
          const d = decisions[i]!;
          w.resolve(w.usage || !usage ? d : { ...d, persistedSearches: null });
        });
      } catch (err) {
        // The requests that queued behind the failed statement fail with it: sent next, they would
        // wait as long again on a database that just did not answer (each API answer stays within
        // one statement's bound). Later requests are decided afresh.
        for (const w of batch) w.reject(err);
        for (const w of queue.splice(0)) w.reject(err);
      }
    }
    waiting.delete(keyId);
  }

  return {
    admit(keyId, usage) {
      return new Promise<RateDecision>((resolve, reject) => {
        const queue = waiting.get(keyId);
        if (queue) {
          queue.push({ usage, resolve, reject });
          return;
        }
        const fresh: Waiter[] = [{ usage, resolve, reject }];
        waiting.set(keyId, fresh);
        void drain(keyId, fresh);
      });
    },
  };
}
