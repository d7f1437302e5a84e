import { LRUCache } from 'lru-cache';

/*
 * When may a request's handler start its upstream calls before the rate
 * limiter has answered (routes with `config.runsAhead`)? Only when this
 * instance knows the key has room, so that a client over its limits does not
 * make upstream calls:
 *
 * - the decisions of the key's latest requests left room in both rate
 *   windows for every request of the key still waiting for its decision on
 *   this instance, and for this one (windows only free slots as time passes,
 *   so this is conservative). A key's requests are decided in the order they
 *   ask (batch.ts), so the waiting ones cannot take this one's slot: a key
 *   with room runs many requests ahead at once, and one with a single slot
 *   left runs one;
 * - the monthly quota they saw leaves QUOTA_MARGIN_UNITS searches beyond what
 *   the waiting requests may count (MAX_UNITS_PER_REQUEST each; searches in
 *   flight are counted only when they answer, so the margin covers a few of
 *   them).
 *
 * Decisions that overlap in time may arrive out of order; the estimate takes
 * the smallest headroom among them. Other instances may spend the same
 * budget meanwhile: a request that ran ahead and is then refused still
 * answers 429 and counts nothing (and its refusal sets the hint to no room,
 * so the key's next requests wait for their decisions). Hints unused for
 * HINT_TTL_MS are forgotten: long enough that a key used once or twice a
 * minute still runs ahead, since on one instance a hint only grows more
 * cautious with age (windows free slots as time passes).
 */

const HINT_TTL_MS = 60_000;
const MAX_KEYS = 10_000;
/** Two web searches with all four engines. */
export const QUOTA_MARGIN_UNITS = 8;
/** The most searches one request counts: a web search on all four engines. */
export const MAX_UNITS_PER_REQUEST = 4;

interface Hint {
  /** Requests both rate windows allow after the key's latest decisions. */
  rate: number;
  /** Searches the monthly quota allowed at the latest decision that looked at it (unknown: -1). */
  quotaUnits: number;
  /** Requests of the key on this instance whose decision has not arrived yet. */
  undecided: number;
  /** The next decision starts a new estimate (no decision overlapped the previous ones). */
  fresh: boolean;
  /** The decision of the latest request that ran ahead. */
  ahead: Promise<unknown> | undefined;
}

export interface Headroom {
  rate: number;
  /** Searches left in the monthly quota; omitted when the decision did not look at the quota. */
  quotaUnits?: number;
}

export interface RunAheadHints {
  /**
   * Called for every request of the key before its decision is asked for:
   * true when this one may run ahead (and `wantsToRunAhead`).
   */
  start(keyId: number, wantsToRunAhead: boolean): boolean;
  /** Records the decision of a request passed to start(). */
  settle(keyId: number, headroom: Headroom): void;
  /** Remembers the pending decision of a request that start() let run ahead. */
  ranAhead(keyId: number, decision: Promise<unknown>): void;
  /** The decision to wait for before asking for another one of the key (the latest request that ran ahead). */
  ahead(keyId: number): Promise<unknown> | undefined;
}

export function createRunAheadHints(): RunAheadHints {
  const hints = new LRUCache<number, Hint>({
    max: MAX_KEYS,
    ttl: HINT_TTL_MS,
    updateAgeOnGet: true,
    // Ages read from performance.now() on each get, not from a time cached by a new timer every millisecond.
    ttlResolution: 0,
  });
  return {
    start(keyId, wantsToRunAhead) {
      const hint = hints.get(keyId);
      if (!hint) {
        hints.set(keyId, { rate: 0, quotaUnits: -1, undecided: 1, fresh: true, ahead: undefined });
        return false;
      }
      const runAhead =
        wantsToRunAhead &&
        hint.rate - hint.undecided >= 1 &&
        hint.quotaUnits - MAX_UNITS_PER_REQUEST * hint.undecided >= QUOTA_MARGIN_UNITS;
      hint.undecided++;
      return runAhead;
    },
    settle(keyId, headroom) {
      const hint = hints.get(keyId);
      if (!hint) return;
      if (hint.fresh) {
        hint.rate = headroom.rate;
        if (headroom.quotaUnits !== undefined) hint.quotaUnits = headroom.quotaUnits;
        hint.fresh = false;
      } else {
        hint.rate = Math.min(hint.rate, headroom.rate);
        if (headroom.quotaUnits !== undefined) hint.quotaUnits = Math.min(hint.quotaUnits, headroom.quotaUnits);
      }
      if (hint.undecided > 0) hint.undecided--;
      if (hint.undecided === 0) {
        hint.fresh = true;
        hint.ahead = undefined;
      }
    },
    ranAhead(keyId, decision) {
      const hint = hints.get(keyId);
      if (hint) hint.ahead = decision;
    },
    ahead(keyId) {
      return hints.peek(keyId)?.ahead;
    },
  };
}
