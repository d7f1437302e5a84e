import type pg from 'pg';
import { monthStart } from './month.js';
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
 * passed by using them late. Once a lease of at least MIN_RENEWED_LEASE
 * slots is RENEW_AT of the way through its time or its slots, its key's
 * next lease is asked for in the background (a row with no waiting request,
 * patient like any other), so that a key busy at a steady pace is admitted
 * from leases alone and none of its requests waits for the database; the
 * new lease replaces the old one when it comes. Slots left unused are given
 * back with the key's next row: a replaced lease's with the renewal after,
 * the last lease's once it expires (a sweep every LEASE_MS). So a busy key
 * costs the database about one row per RENEW_AT x LEASE_MS, whatever its
 * pace. Under the instant answers' bench load (1000 keys, about 15 requests
 * a second each), counted in the server: 4.9 % of requests a row and none
 * waiting for the database, against 6.4 % and 6.4 % with leases of one
 * second that the key's first request after a lease renewed. (Each row is a
 * plpgsql call, the database's main cost, on the cores the server shares.)
 * A key used once in a while, or near its limits, is decided by the
 * database request by request.
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
/**
 * At most this many rows that only give slots back go in one statement; more follow in statements of
 * their own at once. A statement holds its keys' row locks until it ends, and each row costs the
 * database about 0.1 ms: an instance that goes quiet gives back the leases of all its keys (a
 * thousand of them after a busy spell), and in statements of hundreds of rows it would hold up, for
 * tens of milliseconds each, the statements of other instances deciding requests of the same keys.
 */
export const MAX_RELEASES_PER_STATEMENT = 32;
/** How long requests that are all patient wait for others before their statement goes. */
export const PATIENCE_MS = 10;
/** How long a lease's slots may be used after its statement was sent (and how far ahead they are recorded). */
export const LEASE_MS = 2000;
/** The most slots one lease takes. */
export const MAX_LEASE = 128;
/** A statement in flight for longer than this stops admissions from leases until it is answered. */
export const STALLED_MS = 250;
/**
 * The share of a lease's time or slots after which the key's next lease is asked for in the background:
 * late enough that a lease is replaced not much more often than once per LEASE_MS, early enough that
 * the next one comes (one patience window and one statement, which may hold hundreds of keys' rows)
 * well before this one runs out.
 */
export const RENEW_AT = 0.75;
/**
 * Only a lease of at least this many slots is renewed in the background. A smaller one is a key
 * asking about once a second or less: a renewal would be a row for each lease or two of its requests,
 * many of them never used, and rows of renewals make the statements that requests wait for longer.
 * Such a key's request after its lease goes to the database and takes the next lease with it.
 */
export const MIN_RENEWED_LEASE = 8;

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
  /** performance.now() after which the lease's use asks for the next lease. */
  renewAt: number;
  /** The next lease may be asked for in the background (false once asked, until a new lease is kept). */
  renewable: boolean;
}

/** Unused slots of a lease, given back to the bucket they were recorded in. */
interface Release {
  slots: number;
  recordedAt: number;
}

/** A lease asked for in the background, with what the lease's users need read for the quota check. */
interface Renewal {
  usage: UsageLookup | undefined;
  usageEpoch: number;
}

/** One key's row of a statement: its waiting requests, or none (a lease given back or renewed). */
interface Row {
  request: KeyRequests;
  waiters: Waiter[];
  /** The usage epoch of the row's usage lookup, or -1 without one. */
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
   * that epoch: the usage recorder's count of completed writes, so that none was written since; then
   * `userId` (the key's user) lets a renewal of the lease read the user's searches too.
   */
  leased(keyId: number, usageEpoch?: number, userId?: number): RateDecision | null;
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
  /**
   * Unused slots of ended leases to give back, oldest first, by key: one with the key's next row (a
   * statement names a key once). A key that holds a lease gives its previous lease's slots back with
   * the row that renews it, not in a row of their own.
   */
  const releases = new Map<number, Release[]>();

  function queueRelease(keyId: number, release: Release): void {
    const queue = releases.get(keyId);
    if (queue) queue.push(release);
    else releases.set(keyId, [release]);
  }

  /** The key's oldest slots to give back, taken off the queue. */
  function takeRelease(keyId: number): Release | undefined {
    const queue = releases.get(keyId);
    if (!queue) return undefined;
    const release = queue.shift();
    if (queue.length === 0) releases.delete(keyId);
    return release;
  }

  /** Ends the key's lease; its unused slots go back with the next statement. */
  function endLease(keyId: number, state: KeyState): void {
    const lease = state.lease;
    if (!lease) return;
    const unused = lease.slots - state.used;
    if (unused > 0) queueRelease(keyId, { slots: unused, recordedAt: lease.recordedAt });
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
  /** Keys whose next lease is to be asked for in the background. */
  const renewals = new Map<number, Renewal>();
  /** A statement is in flight, or about to be sent. */
  let busy = false;
  /** Impatient requests among the waiting ones. */
  let impatient = 0;
  /** Set while only patient requests wait and no statement is in flight. */
  let patience: NodeJS.Timeout | undefined;
  /** hurry() was called while a statement was in flight: the next one goes at once. */
  let hurried = false;
  /** The latest take() left rows that only give slots back for the next statement (MAX_RELEASES_PER_STATEMENT). */
  let moreReleases = false;
  /** Settles when the statements sent since the latest sendSoon() are answered. */
  let draining: Promise<void> = Promise.resolve();

  /** Takes the next statement's share of the waiting requests, leases to give back and leases to renew. */
  function take(): Row[] {
    const rows: Row[] = [];
    moreReleases = false;
    /** Keys with a row already (waiting requests or a renewal), which a release-only row must not name again. */
    const named = new Set<number>();
    const now = performance.now();
    hurried = false;
    for (const [keyId, queue] of waiting) {
      if (rows.length === MAX_KEYS_PER_STATEMENT) break;
      const batch = queue.splice(0, MAX_BATCH);
      if (queue.length === 0) waiting.delete(keyId);
      for (const w of batch) if (!w.patient) impatient--;
      const state = states.get(keyId);
      // A lease still held (its slots unusable for these requests' quota check) is given back now;
      // the lease these requests ask for replaces any renewal.
      if (state) endLease(keyId, state);
      renewals.delete(keyId);
      const release = takeRelease(keyId);
      const asking = batch.find((w) => w.usage);
      rows.push({
        request: { keyId, wanted: batch.length, usage: asking?.usage, extra: extraFor(state, now), release },
        waiters: batch,
        usageEpoch: asking?.usageEpoch ?? -1,
      });
      named.add(keyId);
    }
    // Leases asked for in the background: the current one stays in use until the next one comes.
    for (const [keyId, renewal] of renewals) {
      if (rows.length === MAX_KEYS_PER_STATEMENT) break;
      renewals.delete(keyId);
      const state = states.get(keyId);
      const extra = extraFor(state, now);
      if (!state?.lease || extra === 0) continue;
      rows.push({
        request: { keyId, wanted: 0, usage: renewal.usage, extra, release: takeRelease(keyId) },
        waiters: [],
        usageEpoch: renewal.usage ? renewal.usageEpoch : -1,
      });
      named.add(keyId);
    }
    // Slots of ended leases, of keys with no row in this statement. A key still holding a lease gives
    // its previous one's back with its renewal, unless more wait (its lease ended with no renewal).
    let releaseRows = 0;
    for (const [keyId, queue] of releases) {
      if (rows.length === MAX_KEYS_PER_STATEMENT) break;
      if (releaseRows === MAX_RELEASES_PER_STATEMENT) {
        moreReleases = true;
        break;
      }
      if (named.has(keyId)) continue;
      const state = states.get(keyId);
      if (queue.length === 1 && state?.lease && state.renewable && now < state.expires) continue;
      rows.push({ request: { keyId, wanted: 0, release: takeRelease(keyId) }, waiters: [], usageEpoch: -1 });
      releaseRows++;
    }
    return rows;
  }

  function sendSoon(): void {
    if (patience) clearTimeout(patience);
    patience = undefined;
    busy = true;
    draining = new Promise((resolve) => setImmediate(() => void drain().then(resolve, resolve)));
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
      queueRelease(keyId, { slots: lease.slots, recordedAt: lease.recordedAt });
      return;
    }
    endLease(keyId, state);
    state.lease = lease;
    state.used = 0;
    state.expires = sentAt + LEASE_MS;
    state.renewAt = sentAt + RENEW_AT * LEASE_MS;
    state.renewable = lease.slots >= MIN_RENEWED_LEASE;
    state.usageEpoch = usageEpoch;
  }

  /** Asks for the key's next lease with a coming statement (the current one stays in use meanwhile). */
  function renew(keyId: number, state: KeyState, usageEpoch: number | undefined, userId: number | undefined): void {
    state.renewable = false;
    const usage =
      usageEpoch !== undefined && userId !== undefined ? { userId, month: monthStart(new Date()) } : undefined;
    renewals.set(keyId, { usage, usageEpoch: usageEpoch ?? -1 });
    waitPatiently();
  }

  async function drain(): Promise<void> {
    while (waiting.size > 0 || releases.size > 0 || renewals.size > 0) {
      const rows = take();
      if (rows.length === 0) break;
      const sentAt = performance.now();
      inFlightSince = sentAt;
      try {
        const decided = await admitKeys(
          pool,
          limits,
          rows.map((row) => row.request),
          LEASE_MS / 1000,
        );
        rows.forEach(({ request, waiters, usageEpoch }, k) => {
          const { decisions, lease } = decided[k]!;
          if (lease) keepLease(request.keyId, lease, sentAt, usageEpoch);
          // The usage read for the key went with its first request that asked for it.
          waiters.forEach((w, i) => {
            const d = decisions[i]!;
            w.resolve(w.usage || !request.usage ? d : { ...d, persistedSearches: null });
          });
        });
      } catch (err) {
        // The database did not answer: no request is admitted from a lease until it does again.
        for (const state of states.values()) state.lease = null;
        renewals.clear();
        // Slots to give back wait for the next sweep, not for a database that just failed.
        moreReleases = false;
        for (const row of rows) for (const w of row.waiters) w.reject(err);
        const behind = waiting;
        waiting = new Map();
        impatient = 0;
        for (const queue of behind.values()) for (const w of queue) w.reject(err);
      }
      inFlightSince = -1;
      // Only patient requests came meanwhile: they wait for company (or a hurry) again.
      // Rows that only give slots back and did not fit go next, in short statements of their own.
      if (impatient === 0 && !hurried && !moreReleases) break;
    }
    busy = false;
    if (waiting.size > 0 || renewals.size > 0) waitPatiently();
  }

  return {
    leased(keyId, usageEpoch, userId) {
      const now = performance.now();
      let state = states.get(keyId);
      if (!state) {
        state = {
          seen: 0,
          seenBefore: 0,
          since: now,
          lease: null,
          used: 0,
          expires: 0,
          usageEpoch: -1,
          renewAt: 0,
          renewable: false,
        };
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
      const decision = lease.decision(state.used++);
      if (state.renewable && (now >= state.renewAt || state.used >= RENEW_AT * lease.slots)) {
        renew(keyId, state, usageEpoch, userId);
      }
      return decision;
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
      // A lease asked for in the background and not answered yet would be kept after this: none is
      // asked for any more, and one in flight is answered first.
      renewals.clear();
      if (busy) await draining;
      for (const [keyId, state] of states) endLease(keyId, state);
      // A statement names a key once: a key with several leases to give back takes several.
      while (releases.size > 0) {
        const keys = [...releases.keys()].map((keyId) => ({ keyId, wanted: 0, release: takeRelease(keyId) }));
        await admitKeys(pool, limits, keys);
      }
    },
  };
}
