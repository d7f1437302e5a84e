import { asUpstreamError, cutShort } from '../failures.js';
import { HttpFailure } from '../http.js';
import type { CallOutcome, CallPermit, Pacer } from '../pacing/pacer.js';
import { type ProviderSlug, UpstreamError } from '../../providers/types.js';

/*
 * Stage 4, paced: a provider under pacing, concurrency or a budget (pacing/) takes its slot before
 * the call and waits here until the slot's time, at most `maxWaitMs`. Without a slot in time it
 * sits the request out (`paced`, or `budget_exhausted`), nothing recorded.
 *
 * - A wait cut short by the request's deadline or abort gives its slot back at once
 *   (`permit.abandon`: the lease and the budget unit), and the call is not made.
 * - After the call the permit is released with what the answer reported, write-behind: the
 *   caller's answer does not wait for it, and the pacer holds this process's next call of the
 *   provider until it is stored, so that call is paced by it. Only the answer that first tells this
 *   process the provider is limited waits for its report (`Release.news`): no later call, in any
 *   process, then leaves before the database knows the upstream's pace.
 */

/** A call's outcome as the paced stage sees it: `report` is told an answer's rate-limit headers as soon as it has them. */
export type PacedCall<T> = (report: (outcome: CallOutcome) => void) => Promise<T>;

export type PacedStage = <T>(
  provider: ProviderSlug,
  maxWaitMs: number,
  signal: AbortSignal | undefined,
  call: PacedCall<T>,
  user?: number,
) => Promise<T>;

export interface PacedLog {
  warn(obj: unknown, msg?: string): void;
}

export function paced(pacer: Pacer | undefined, log?: PacedLog): PacedStage {
  /** A slot under the provider's pacing (null: none needed); a failure to get one is never the provider's. */
  async function admit(provider: ProviderSlug, maxWaitMs: number, signal?: AbortSignal, user?: number) {
    if (!pacer) return null;
    try {
      // Whose search makes the call: their share of a budget applies (none for probes).
      return await pacer.admit(provider, maxWaitMs, signal, user);
    } catch (err) {
      if (err instanceof UpstreamError) throw err;
      if (err instanceof HttpFailure) throw asUpstreamError(provider, err);
      // The request gave up while the pacer waited for the slot (the pacer gave the slot back).
      if (signal?.aborted) throw cutShort(provider, signal);
      log?.warn({ provider, error: err instanceof Error ? err.message : String(err) }, 'pacing unavailable');
      throw new UpstreamError(provider, 'paced', 'pacing could not be checked (database unavailable)');
    }
  }

  return async (provider, maxWaitMs, signal, call, user) => {
    const permit = await admit(provider, maxWaitMs, signal, user);
    if (!permit) return call(() => {});
    await untilSlot(provider, permit, signal);
    let outcome: CallOutcome;
    try {
      return await call((o) => {
        outcome = o;
      });
    } finally {
      const release = permit.release(outcome);
      if (release.news) await release.written;
    }
  };
}

/** Waits for the permit's slot; cut short by the signal, the slot goes back and the call is not made. */
function untilSlot(provider: ProviderSlug, permit: CallPermit, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) {
    void permit.abandon();
    return Promise.reject(cutShort(provider, signal));
  }
  const waitMs = permit.waitMs ?? 0;
  if (waitMs <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      void permit.abandon();
      reject(cutShort(provider, signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, waitMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
