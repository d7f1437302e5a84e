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
 *   for) over windows of WINDOW lookups. Below MIN_SAVED (distinct queries: the statements cost
 *   more than the calls they save) the provider keeps to a sample of its keys, 1 in SAMPLE_OF
 *   chosen by the key's hash, so that every process samples the same keys and the measure stays
 *   true; once the sample saves MIN_SAVED again, all its keys go through it again.
 */

const WINDOW = 200;
const MIN_SAVED = 0.1;
/** Keys whose hash's byte (`uses`' sample) is below 256 / SAMPLE_OF are the sample. */
const SAMPLE_OF = 16;

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

export function sharingPolicy(always: (provider: ProviderSlug) => boolean): SharingPolicy {
  const measures = new Map<ProviderSlug, Measure>();
  const measureOf = (provider: ProviderSlug): Measure => {
    let m = measures.get(provider);
    if (!m) measures.set(provider, (m = { full: true, lookups: 0, saved: 0 }));
    return m;
  };
  return {
    uses(provider, sample) {
      if (always(provider)) return true;
      return measureOf(provider).full || sample < 256 / SAMPLE_OF;
    },
    note(provider, saved) {
      if (always(provider)) return;
      const m = measureOf(provider);
      m.lookups++;
      if (saved) m.saved++;
      if (m.lookups < WINDOW) return;
      m.full = m.saved / m.lookups >= MIN_SAVED;
      m.lookups = 0;
      m.saved = 0;
    },
    full(provider) {
      return always(provider) || measureOf(provider).full;
    },
  };
}
