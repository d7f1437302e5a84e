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
 * A patient request (one whose upstream calls already run ahead of the
 * decision, run-ahead.ts) does not need its decision at once, only before
 * its work is done: requests that are all patient wait up to PATIENCE_MS
 * for more to join them, so that one statement decides a whole stretch of
 * traffic instead of whatever arrived within one round trip. An impatient
 * request, or `hurry()` (a patient request's work is done), sends what
 * waits at the end of the turn.
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
/** How long requests that are all patient wait for others before their statement goes. */
export const PATIENCE_MS = 10;

interface Waiter {
  usage: UsageLookup | undefined;
  patient: boolean;
  resolve(decision: RateDecision): void;
  reject(err: unknown): void;
}

export interface AdmissionBatcher {
  /** `patient`: the decision may wait up to PATIENCE_MS for other requests to share its statement. */
  admit(keyId: number, usage?: UsageLookup, patient?: boolean): Promise<RateDecision>;
  /** Sends what waits (patiently) at the end of this turn. */
  hurry(): void;
}

export function createAdmissionBatcher(pool: pg.Pool, limits: Limits): AdmissionBatcher {
  /** Waiting requests by key, keys in the order their first waiting request arrived. */
  let waiting = new Map<number, Waiter[]>();
  /** A statement is in flight, or about to be sent. */
  let busy = false;
  /** Impatient requests among the waiting ones. */
  let impatient = 0;
  /** Set while only patient requests wait and no statement is in flight. */
  let patience: NodeJS.Timeout | undefined;
  /** hurry() was called while a statement was in flight: the next one goes at once. */
  let hurried = false;

  /** Takes the next statement's share of the waiting requests. */
  function take(): { keys: KeyRequests[]; waiters: Waiter[][] } {
    const keys: KeyRequests[] = [];
    const waiters: Waiter[][] = [];
    hurried = false;
    for (const [keyId, queue] of waiting) {
      if (keys.length === MAX_KEYS_PER_STATEMENT) break;
      const batch = queue.splice(0, MAX_BATCH);
      if (queue.length === 0) waiting.delete(keyId);
      for (const w of batch) if (!w.patient) impatient--;
      keys.push({ keyId, wanted: batch.length, usage: batch.find((w) => w.usage)?.usage });
      waiters.push(batch);
    }
    return { keys, waiters };
  }

  function sendSoon(): void {
    if (patience) clearTimeout(patience);
    patience = undefined;
    busy = true;
    setImmediate(() => void drain());
  }

  function waitPatiently(): void {
    if (patience || busy) return;
    patience = setTimeout(sendSoon, PATIENCE_MS);
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
        impatient = 0;
        for (const queue of behind.values()) for (const w of queue) w.reject(err);
      }
      // Only patient requests came meanwhile: they wait for company (or a hurry) again.
      if (impatient === 0 && !hurried) break;
    }
    busy = false;
    if (waiting.size > 0) waitPatiently();
  }

  return {
    admit(keyId, usage, patient = false) {
      return new Promise<RateDecision>((resolve, reject) => {
        const waiter = { usage, patient, resolve, reject };
        const queue = waiting.get(keyId);
        if (queue) queue.push(waiter);
        else waiting.set(keyId, [waiter]);
        if (!patient) impatient++;
        if (busy) return;
        if (patient) waitPatiently();
        else sendSoon();
      });
    },
    hurry() {
      if (patience) sendSoon();
      else if (busy) hurried = true;
    },
  };
}
