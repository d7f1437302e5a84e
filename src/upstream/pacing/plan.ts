import type { Config } from '../../config/index.js';
import { DEFAULT_USER_SHARE_PERCENT, type ProviderLimitsSetting } from '../../config/provider-limits.js';
import type { ProviderDescriptor } from '../../providers/types.js';

/*
 * What limits one provider's calls on this deployment: PROVIDER_LIMITS where
 * the operator set something, else the upstream's published terms
 * (ProviderDescriptor.terms) when the base URL is the upstream's own host.
 * What the upstream reports on its answers is learnt at run time (pacer.ts).
 */

export interface Budget {
  period: 'month' | 'day';
  calls: number;
  /** The calls one user's searches may make of it this period (null: no share, one pool). */
  perUser: number | null;
}

export interface PacingPlan {
  /** The rate's interval between two calls, ms (none: not paced by a rate). */
  intervalMs: number | null;
  /** What the pacer spaces slots by: the interval with the rate's share of SLOT_MARGIN_MS, ms. */
  slotMs: number | null;
  /** The operator set the rate: what the upstream reports may slow it, never speed it up. */
  explicitRate: boolean;
  concurrency: number | null;
  budget: Budget | null;
  /** The upstream reports its limits on its answers (pace by them). */
  learnable: boolean;
  /** Slot spacing until the upstream has reported anything (its lowest plan, with its margin), ms. */
  provisionalMs: number | null;
  /** How long a call may hold a concurrency slot at most (its timeout, and a margin), ms. */
  holdMs: number;
  /** Where the defaults in force come from ('' when none is in force). */
  source: string;
}

export const spacingMs = (rate: { limit: number; windowSeconds: number }): number =>
  (rate.windowSeconds * 1000) / rate.limit;

/**
 * A rate must hold in every sliding window at the upstream, yet a call leaves up to the pacer's
 * LATE_TOLERANCE_MS after its slot and takes a little longer than another on its way there (a busy
 * event loop, a new connection). The slots of one window share this margin: `limit` calls spaced by
 * the interval plus margin / limit span the window plus the margin.
 */
export const SLOT_MARGIN_MS = 150;

export const slotSpacingMs = (rate: { limit: number; windowSeconds: number }): number =>
  spacingMs(rate) + SLOT_MARGIN_MS / rate.limit;

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/\.$/, '').toLowerCase();
  } catch {
    return '';
  }
}

/** Whether the provider's configured base URL is one of the hosts its published terms bind. */
export function termsApply(descriptor: ProviderDescriptor, config: Config): boolean {
  const terms = descriptor.terms;
  if (!terms) return false;
  const urls = descriptor.baseUrlVariables.map((v) => String(config[v] ?? ''));
  return urls.some((u) => terms.hosts.includes(hostOf(u)));
}

export function pacingPlan(descriptor: ProviderDescriptor, config: Config, timeoutMs: number): PacingPlan {
  const setting: ProviderLimitsSetting = config.PROVIDER_LIMITS[descriptor.slug] ?? {};
  const terms = termsApply(descriptor, config) ? descriptor.terms : undefined;
  let usedTerms = false;

  const rate = setting.rate ? setting.rate : setting.rate === undefined ? terms?.rate : undefined;
  if (!setting.rate && rate) usedTerms = true;
  const intervalMs = rate ? spacingMs(rate) : null;

  let concurrency: number | null = null;
  if (setting.concurrency) concurrency = setting.concurrency;
  else if (setting.concurrency === undefined && terms?.concurrency) {
    concurrency = terms.concurrency;
    usedTerms = true;
  }

  let pool: Omit<Budget, 'perUser'> | null = null;
  if (setting.month) pool = { period: 'month', calls: setting.month };
  else if (setting.day) pool = { period: 'day', calls: setting.day };
  else if (setting.month === undefined && setting.day === undefined && terms?.budget) {
    pool = terms.budget(config);
    if (pool) usedTerms = true;
  }
  const share = setting.userShare === undefined ? DEFAULT_USER_SHARE_PERCENT : setting.userShare;
  const budget: Budget | null = pool && { ...pool, perUser: userAllowance(pool.calls, share) };

  const report = descriptor.limitsReport;
  // The lowest plan's rate binds the upstream's own host, as its terms do.
  const provisional = setting.rate === null || !terms ? undefined : report?.untilReported;
  return {
    intervalMs,
    slotMs: rate ? slotSpacingMs(rate) : null,
    explicitRate: Boolean(setting.rate),
    concurrency,
    budget,
    learnable: report !== undefined,
    provisionalMs: provisional ? slotSpacingMs(provisional) : null,
    holdMs: timeoutMs + 5000,
    source: usedTerms ? (terms?.source ?? '') : '',
  };
}

/** A user's calls of a budget under a share (%): at least one, and none when the share is the whole. */
export function userAllowance(calls: number, sharePercent: number | null): number | null {
  if (sharePercent === null || sharePercent >= 100) return null;
  return Math.max(1, Math.floor((calls * sharePercent) / 100));
}

/** Whether every call must pass the shared pacer (a statement per call); else only learnable answers are read. */
export function isPaced(plan: PacingPlan): boolean {
  return plan.intervalMs !== null || plan.concurrency !== null || plan.budget !== null;
}
