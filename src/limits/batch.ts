import type pg from 'pg';
import {
  admitKeys,
  type KeyRequests,
  type Lease,
  type Limits,
  type RateDecision,
  type UsageLookup,
} from './rate-limiter.js';

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
 * Leases: a key that keeps coming back on this instance (requests in two
 * LEASE_MS periods running, not a single short burst) asks, with its next statement, for as many slots
 * more as it used in about the last LEASE_MS (at most MAX_LEASE, at most
 * half the room its windows have left: migrations/0009_rate_leases.sql).
 * Its next requests are admitted from those slots at once, with no round
 * trip (`leased()`), for LEASE_MS after the statement was sent; the slots
 * are recorded as admitted at the end of that time, so no limit can be
 * passed by using them late. Slots left unused are given back: with the
 * key's next statement, or by a sweep every LEASE_MS. A key used once in a
 * while, or near its limits, is decided by the database request by request.
 * While the database does not answer (a statement failed, or has been in
 * flight for STALLED_MS), no request is admitted from a lease: an outage
 * answers 503 at once, as without leases.
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
/** How long a lease's slots may be used after its statement was sent (and how far ahead they are recorded). */
export const LEASE_MS = 1000;
/** The most slots one lease takes. */
export const MAX_LEASE = 64;
/** A statement in flight for longer than this stops admissions from leases until it is answered. */
export const STALLED_MS = 250;

/** What this instance knows of a key that asks often: its demand and its lease. */
interface KeyState {
  /** Requests seen since `since`, and in the LEASE_MS before it. */
  seen: number;
  seenBefore: number;
  since: number;
  lease: Lease | null;
  /** Slots of the lease used so far. */
  used: number;
  /** performance.now() after which the lease's slots may no longer be used. */
  expires: number;
  /** The usage epoch the lease's persisted searches were read in (see `leased`), or -1 without them. */
  usageEpoch: number;
}

interface Waiter {
  usage: UsageLookup | undefined;
  /** The usage recorder's epoch when the usage lookup was asked for. */
  usageEpoch: number;
  patient: boolean;
  resolve(decision: RateDecision): void;
  reject(err: unknown): void;
}

export interface AdmissionBatcher {
  /**
   * Counts a request of the key toward its demand and admits it from the key's lease when one has a
   * slot left: its decision, or null (then ask `admit`). With `usageEpoch` (the request needs the
   * user's persisted searches for the quota check), only from a lease whose searches were read in
   * that epoch: the usage recorder's count of completed writes, so that none was written since.
   */
  leased(keyId: number, usageEpoch?: number): RateDecision | null;
  /** `patient`: the decision may wait up to PATIENCE_MS for other requests to share its statement. */
  admit(keyId: number, usage?: UsageLookup, patient?: boolean, usageEpoch?: number): Promise<RateDecision>;
  /** Sends what waits (patiently) at the end of this turn. */
  hurry(): void;
  /** Ends every lease and gives back their unused slots now (a lifecycle flush: shutdown, usage shown). */
  releaseAll(): Promise<void>;
  /** Stops the sweep of expired leases. */
  stop(): void;
}

export function createAdmissionBatcher(pool: pg.Pool, limits: Limits): AdmissionBatcher {
  /** performance.now() when the statement in flight was sent, or -1. */
  let inFlightSince = -1;
  /** Keys seen recently (demand, leases); swept every LEASE_MS. */
  const states = new Map<number, KeyState>();
  /** Unused slots of expired leases to give back with the next statement. */
  let releases = new Map<number, { slots: number; recordedAt: number }>();

  /** Ends the key's lease; its unused slots go back with the next statement. */
  function endLease(keyId: number, state: KeyState): void {
    const lease = state.lease;
    if (!lease) return;
    const unused = lease.slots - state.used;
    if (unused > 0) releases.set(keyId, { slots: unused, recordedAt: lease.recordedAt });
    state.lease = null;
  }

  /** Slots to ask for beyond the waiting requests: about as many as the key asked for in the last LEASE_MS. */
  function extraFor(state: KeyState | undefined, now: number): number {
    // Only for a key busy for a while (requests in the previous LEASE_MS too), not for a short burst.
    if (!state || state.seenBefore === 0 || state.seen + state.seenBefore < 2) return 0;
    const expected = ((state.seen + state.seenBefore) * LEASE_MS) / (now - state.since + LEASE_MS);
    return Math.min(MAX_LEASE, Math.round(expected));
  }

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [keyId, state] of states) {
      if (state.lease && now >= state.expires) endLease(keyId, state);
      if (now - state.since >= 2 * LEASE_MS && !state.lease) states.delete(keyId);
    }
    if (releases.size > 0 && !busy) waitPatiently();
  }, LEASE_MS);
  sweep.unref();

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
    const now = performance.now();
    hurried = false;
    for (const [keyId, queue] of waiting) {
      if (keys.length === MAX_KEYS_PER_STATEMENT) break;
      const batch = queue.splice(0, MAX_BATCH);
      if (queue.length === 0) waiting.delete(keyId);
      for (const w of batch) if (!w.patient) impatient--;
      const state = states.get(keyId);
      // A lease still held (its slots unusable for these requests' quota check) is given back now.
      if (state) endLease(keyId, state);
      const release = releases.get(keyId);
      releases.delete(keyId);
      keys.push({
        keyId,
        wanted: batch.length,
        usage: batch.find((w) => w.usage)?.usage,
        extra: extraFor(state, now),
        release,
      });
      waiters.push(batch);
    }
    // Expired leases of keys with nothing waiting.
    for (const [keyId, release] of releases) {
      if (keys.length === MAX_KEYS_PER_STATEMENT) break;
      keys.push({ keyId, wanted: 0, release });
      waiters.push([]);
      releases.delete(keyId);
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

  /** Keeps the lease a statement took for the key (usable until LEASE_MS after it was sent). */
  function keepLease(keyId: number, lease: Lease, sentAt: number, usageEpoch: number): void {
    const state = states.get(keyId);
    if (!state) {
      // Swept meanwhile: nobody will use it.
      releases.set(keyId, { slots: lease.slots, recordedAt: lease.recordedAt });
      return;
    }
    endLease(keyId, state);
    state.lease = lease;
    state.used = 0;
    state.expires = sentAt + LEASE_MS;
    state.usageEpoch = usageEpoch;
  }

  async function drain(): Promise<void> {
    while (waiting.size > 0 || releases.size > 0) {
      const { keys, waiters } = take();
      const sentAt = performance.now();
      inFlightSince = sentAt;
      try {
        const decided = await admitKeys(pool, limits, keys, LEASE_MS / 1000);
        waiters.forEach((batch, k) => {
          const { keyId } = keys[k]!;
          const { decisions, lease } = decided[k]!;
          // The usage read for the key went with its first request that asked for it.
          if (lease) keepLease(keyId, lease, sentAt, batch.find((w) => w.usage)?.usageEpoch ?? -1);
          const usage = keys[k]!.usage;
          batch.forEach((w, i) => {
            const d = decisions[i]!;
            w.resolve(w.usage || !usage ? d : { ...d, persistedSearches: null });
          });
        });
      } catch (err) {
        // The database did not answer: no request is admitted from a lease until it does again.
        for (const state of states.values()) state.lease = null;
        for (const batch of waiters) for (const w of batch) w.reject(err);
        const behind = waiting;
        waiting = new Map();
        impatient = 0;
        for (const queue of behind.values()) for (const w of queue) w.reject(err);
      }
      inFlightSince = -1;
      // Only patient requests came meanwhile: they wait for company (or a hurry) again.
      if (impatient === 0 && !hurried) break;
    }
    busy = false;
    if (waiting.size > 0) waitPatiently();
  }

  return {
    leased(keyId, usageEpoch) {
      const now = performance.now();
      let state = states.get(keyId);
      if (!state) {
        state = { seen: 0, seenBefore: 0, since: now, lease: null, used: 0, expires: 0, usageEpoch: -1 };
        states.set(keyId, state);
      } else if (now - state.since >= LEASE_MS) {
        state.seenBefore = now - state.since < 2 * LEASE_MS ? state.seen : 0;
        state.seen = 0;
        state.since = now;
      }
      state.seen++;
      const lease = state.lease;
      if (!lease || state.used >= lease.slots || now >= state.expires) return null;
      // A statement unanswered for a while: the database may be gone, and a lease must not hide it.
      if (inFlightSince >= 0 && now - inFlightSince > STALLED_MS) return null;
      if (usageEpoch !== undefined && usageEpoch !== state.usageEpoch) return null;
      return lease.decision(state.used++);
    },
    admit(keyId, usage, patient = false, usageEpoch) {
      return new Promise<RateDecision>((resolve, reject) => {
        const waiter = { usage, usageEpoch: usageEpoch ?? -1, patient, resolve, reject };
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
    stop() {
      clearInterval(sweep);
    },
    async releaseAll() {
      for (const [keyId, state] of states) endLease(keyId, state);
      if (releases.size === 0) return;
      const keys = [...releases].map(([keyId, release]) => ({ keyId, wanted: 0, release }));
      releases = new Map();
      await admitKeys(pool, limits, keys);
    },
  };
}
