import type { ProviderSlug } from '../providers/types.js';

/*
 * Where a cache level pays (issue 69), one rule for both: the shared level, where a miss costs a
 * lookup and a store statement, and this process's (stages/cached.ts), where a value kept that no
 * one asks for again costs the garbage collector. A hit saves one upstream call. Below, "it" is the
 * level; each level has its own measures.
 *
 * - Providers under pacing, a budget, or limits their latest answer reported (Pacer.limits) always
 *   go through it (a learnable provider whose answers say it has room is measured): a call saved there
 *   is a slot and a unit of the upstream's allowance, and its flights keep identical calls on
 *   several processes to one, so the spending stays exact.
 * - Every other provider goes through it while it saves calls: each process measures, per
 *   provider, the share of its lookups answered by another process (a hit, or a flight waited
 *   for) over windows of `window` lookups. Below MIN_SAVED (distinct queries: the statements cost
 *   more than the calls they save) the provider keeps to a sample of its keys, 1 in `sampleOf`
 *   chosen by the key's hash, so that every process samples the same keys and the measure stays
 *   true; once the sample saves MIN_SAVED again, all its keys go through it again.
 *
 * The sample is what the level costs where it does not pay, and how soon it sees that it pays
 * again (a window of sampled lookups): each level sets both (Sampling).
 */

const MIN_SAVED = 0.1;

/** A level's sample: keys whose hash's byte (`uses`' sample) is below 256 / sampleOf are in it. */
export interface Sampling {
  sampleOf: number;
  /** Lookups a measure spans before it decides. */
  window: number;
}

/**
 * This process's level: a key kept costs a Map entry and the collector's work on it; 1 in 16, over
 * windows of 200.
 */
const IN_PROCESS_SAMPLING: Sampling = { sampleOf: 16, window: 200 };

export interface SharingPolicy {
  /** Whether the call whose key's hash begins with the byte `sample` goes through the level. */
  uses(provider: ProviderSlug, sample: number): boolean;
  /** What the shared level did for a call that went through it: `saved` when it answered it. */
  note(provider: ProviderSlug, saved: boolean): void;
  /** Whether all of the provider's keys go through the shared level now (tests, diagnostics). */
  full(provider: ProviderSlug): boolean;
}

interface Measure {
  full: boolean;
  lookups: number;
  saved: number;
}

export function sharingPolicy(
  always: (provider: ProviderSlug) => boolean,
  sampling: Sampling = IN_PROCESS_SAMPLING,
): SharingPolicy {
  const { sampleOf, window } = sampling;
  const measures = new Map<ProviderSlug, Measure>();
  const measureOf = (provider: ProviderSlug): Measure => {
    let m = measures.get(provider);
    if (!m) measures.set(provider, (m = { full: true, lookups: 0, saved: 0 }));
    return m;
  };
  return {
    uses(provider, sample) {
      if (always(provider)) return true;
      return measureOf(provider).full || sample < 256 / sampleOf;
    },
    note(provider, saved) {
      if (always(provider)) return;
      const m = measureOf(provider);
      m.lookups++;
      if (saved) m.saved++;
      if (m.lookups < window) return;
      m.full = m.saved / m.lookups >= MIN_SAVED;
      m.lookups = 0;
      m.saved = 0;
    },
    full(provider) {
      return always(provider) || measureOf(provider).full;
    },
  };
}
