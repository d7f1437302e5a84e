import { suspended } from '../failures.js';
import type { ProviderSuspensions } from '../suspension.js';
import type { ProviderSlug } from '../../providers/types.js';

/*
 * Stage 3, not suspended: a provider that keeps failing (suspension.ts) is not called by searches;
 * the call fails at once as `suspended`, nothing recorded. Cached answers (the stages before) are
 * still served.
 */

export type SuspendedStage = <T>(provider: ProviderSlug, next: () => Promise<T>) => Promise<T>;

export function unlessSuspended(suspensions: ProviderSuspensions | undefined): SuspendedStage {
  return (provider, next) => {
    const wait = suspensions?.remainingMs(provider) ?? 0;
    return wait > 0 ? Promise.reject(suspended(provider, wait)) : next();
  };
}
