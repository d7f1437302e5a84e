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
 *   true; once the sample saves MIN_SAVED again (as soon as it has saved MIN_SAVED of a window:
 *   the window's verdict cannot be another), all its keys go through it again.
 * - A window of the sample that saved nothing at all (its searches never repeat) thins the sample
 *   `thinBy` times: the keys of the thin sample are some of the sample's, so processes that
 *   disagree still look up the same keys. The first call the thin sample saves brings the sample
 *   back at once, which measures again as above.
 *
 * The sample is what the level costs where it does not pay, and how soon it sees that it pays
 * again (a window of sampled lookups); the thin sample, what it costs where it never paid, and how
 * soon a repeat is seen there (1 / (sampleOf × thinBy) of a provider's calls, each repeated with
 * the share it saves): each level sets these (Sampling).
 */

const MIN_SAVED = 0.1;

/** The values `uses`' sample takes: 16 bits of the key's hash. */
export const SAMPLE_RANGE = 0x10000;

/** A level's sample: keys whose 16 bits of hash (`uses`' sample) are below SAMPLE_RANGE / sampleOf are in it. */
export interface Sampling {
  sampleOf: number;
  /** Lookups a measure spans before it decides. */
  window: number;
  /** How many times thinner the sample gets where it saved nothing at all (1: never). */
  thinBy: number;
}

/**
 * This process's level: a key kept costs a Map entry and the collector's work on it; 1 in 16, over
 * windows of 200, never thinner.
 */
const IN_PROCESS_SAMPLING: Sampling = { sampleOf: 16, window: 200, thinBy: 1 };

export interface SharingPolicy {
  /** Whether the call whose key's hash gives `sample` (0 to SAMPLE_RANGE - 1) goes through the level. */
  uses(provider: ProviderSlug, sample: number): boolean;
  /** What the shared level did for a call that went through it: `saved` when it answered it. */
  note(provider: ProviderSlug, saved: boolean): void;
  /** Whether all of the provider's keys go through the shared level now (tests, diagnostics). */
  full(provider: ProviderSlug): boolean;
}

type State = 'full' | 'sample' | 'thin';

interface Measure {
  state: State;
  lookups: number;
  saved: number;
}

export function sharingPolicy(
  always: (provider: ProviderSlug) => boolean,
  sampling: Sampling = IN_PROCESS_SAMPLING,
): SharingPolicy {
  const { sampleOf, window, thinBy } = sampling;
  const below: Record<State, number> = {
    full: SAMPLE_RANGE,
    sample: SAMPLE_RANGE / sampleOf,
    thin: SAMPLE_RANGE / (sampleOf * thinBy),
  };
  const measures = new Map<ProviderSlug, Measure>();
  const measureOf = (provider: ProviderSlug): Measure => {
    let m = measures.get(provider);
    if (!m) measures.set(provider, (m = { state: 'full', lookups: 0, saved: 0 }));
    return m;
  };
  const begin = (m: Measure, state: State) => {
    m.state = state;
    m.lookups = 0;
    m.saved = 0;
  };
  return {
    uses(provider, sample) {
      if (always(provider)) return true;
      return sample < below[measureOf(provider).state];
    },
    note(provider, saved) {
      if (always(provider)) return;
      const m = measureOf(provider);
      if (m.state === 'thin') {
        if (saved) begin(m, 'sample');
        return;
      }
      m.lookups++;
      if (saved) m.saved++;
      // The sample has saved what the window asks already: the window's verdict cannot be another.
      if (m.state === 'sample' && m.saved >= MIN_SAVED * window) return begin(m, 'full');
      if (m.lookups < window) return;
      if (m.saved / m.lookups >= MIN_SAVED) begin(m, 'full');
      else if (m.state === 'sample' && m.saved === 0 && thinBy > 1) begin(m, 'thin');
      else begin(m, 'sample');
    },
    full(provider) {
      return always(provider) || measureOf(provider).state === 'full';
    },
  };
}
