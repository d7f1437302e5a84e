import type pg from 'pg';
import type { ProviderSlug } from '../../providers/types.js';
import { isPaced, type PacingPlan } from './plan.js';

/*
 * What limits each provider now, for the status API, the status page and
 * /metrics: the pacing in force (configured, the upstream's terms, or what it
 * reported), this period's calls against the budget, and the upstream's own
 * count of what is left. Read from the shared tables, so every instance
 * shows the same figures.
 */

export interface LimitsView {
  /** Calls a second Sift allows (null: not paced by a rate). */
  ratePerSecond: number | null;
  concurrency: number | null;
  budget: {
    period: 'month' | 'day';
    limit: number;
    used: number;
    resetsAt: Date;
    /** A user's calls of it at most (null: no share). */
    perUser: number | null;
    /** The user whose searches spent the most of it this period (their name, never a key). */
    topUser: { name: string; calls: number } | null;
  } | null;
  /** The upstream's own count for its long window, as it last reported it. */
  upstream: { limit: number; remaining: number; resetsAt: Date | null; reportedAt: Date } | null;
  /** Where the default terms in force come from ('' when none is). */
  terms: string;
}

interface PacingRow {
  provider: string;
  reported_at: number | null;
  reported_interval: number | null;
  period_limit: string | null;
  period_remaining: string | null;
  period_reset_at: number | null;
}

function periodEnd(period: 'month' | 'day', now: Date): Date {
  return period === 'month'
    ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** The view of every provider of `slugs` that anything limits (the others are left out). */
export async function readLimits(
  pool: pg.Pool,
  plans: ReadonlyMap<ProviderSlug, PacingPlan>,
  slugs: readonly ProviderSlug[],
): Promise<Map<ProviderSlug, LimitsView>> {
  const [pacing, usage, spenders] = await Promise.all([
    pool.query<PacingRow>(
      `SELECT provider, reported_at, reported_interval, period_limit, period_remaining, period_reset_at
         FROM provider_pacing WHERE provider = ANY($1)`,
      [slugs],
    ),
    pool.query<{ provider: string; period: string; calls: string; now: Date }>(
      `SELECT provider, period, calls, now() AS now FROM provider_budget_usage
        WHERE provider = ANY($1) AND period_start = date_trunc(period, now(), 'UTC')`,
      [slugs],
    ),
    pool.query<{ provider: string; period: string; username: string; calls: string }>(
      `SELECT DISTINCT ON (b.provider, b.period) b.provider, b.period, u.username, b.calls
         FROM provider_budget_users b JOIN users u ON u.id = b.user_id
        WHERE b.provider = ANY($1) AND b.period_start = date_trunc(b.period, now(), 'UTC') AND b.calls > 0
        ORDER BY b.provider, b.period, b.calls DESC, b.user_id`,
      [slugs],
    ),
  ]);
  const rows = new Map(pacing.rows.map((r) => [r.provider, r]));
  const used = new Map(usage.rows.map((r) => [`${r.provider} ${r.period}`, Number(r.calls)]));
  const top = new Map(
    spenders.rows.map((r) => [`${r.provider} ${r.period}`, { name: r.username, calls: Number(r.calls) }]),
  );
  const now = new Date();
  const out = new Map<ProviderSlug, LimitsView>();
  for (const slug of slugs) {
    const plan = plans.get(slug);
    if (!plan) continue;
    const row = rows.get(slug);
    const reported = row?.reported_at != null;
    if (!isPaced(plan) && !(reported && (row.reported_interval !== null || row.period_limit !== null))) continue;
    let spacing = plan.intervalMs;
    if (reported && row.reported_interval !== null) {
      spacing = plan.explicitRate ? Math.max(spacing ?? 0, row.reported_interval) : row.reported_interval;
    }
    out.set(slug, {
      ratePerSecond: spacing ? Math.round((1000 / spacing) * 1000) / 1000 : null,
      concurrency: plan.concurrency,
      budget: plan.budget
        ? {
            period: plan.budget.period,
            limit: plan.budget.calls,
            used: used.get(`${slug} ${plan.budget.period}`) ?? 0,
            resetsAt: periodEnd(plan.budget.period, now),
            perUser: plan.budget.perUser,
            topUser: top.get(`${slug} ${plan.budget.period}`) ?? null,
          }
        : null,
      upstream:
        reported && row.period_limit !== null && row.period_remaining !== null
          ? {
              limit: Number(row.period_limit),
              remaining: Number(row.period_remaining),
              resetsAt: row.period_reset_at === null ? null : new Date(row.period_reset_at),
              reportedAt: new Date(row.reported_at!),
            }
          : null,
      terms: plan.source,
    });
  }
  return out;
}
