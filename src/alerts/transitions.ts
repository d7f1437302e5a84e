import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Config } from '../config/index.js';
import type { Transition } from '../upstream/health-recorder.js';

/*
 * Queues provider state changes for the alert webhooks (ALERT_WEBHOOK_URLS).
 *
 * The health recorder decides the transitions in Postgres: its status write
 * (write-behind, never on a request's path) holds the status lock, compares
 * each observation with the stored row and upserts it. It then runs this, in
 * the same transaction, with the rows whose up/down state it changed: one
 * alert_outbox row per change and webhook target. Whichever process or
 * instance made the write, a change is queued exactly once and never lost:
 * it commits together with the state it reports. A provider observed for the
 * first time (no row yet) has no old state: no alert. The outbox rows become
 * due after the digest window, so changes queued meanwhile go out together.
 *
 * Nothing of the upstream's error text is queued: alert texts carry only
 * Sift's own words (spec: error text is for the signed-in status page).
 */

/** The outbox's name for a webhook URL (the URL itself is never stored). */
export function targetOf(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex');
}

export interface TransitionQueueOptions {
  /** targetOf() of each webhook URL. */
  targets: readonly string[];
  /** How long a queued change waits for others to join its message (ms). */
  windowMs: number;
}

/** The health recorder's `onTransitions` for the configured webhooks; undefined without any. */
export function alertTransitions(config: Pick<Config, 'ALERT_WEBHOOK_URLS' | 'ALERT_DIGEST_WINDOW_MS'>) {
  if (config.ALERT_WEBHOOK_URLS.length === 0) return undefined;
  return queueTransitions({
    targets: config.ALERT_WEBHOOK_URLS.map(targetOf),
    windowMs: config.ALERT_DIGEST_WINDOW_MS,
  });
}

/** The recorder's `onTransitions`: queues each transition for every target. */
export function queueTransitions(options: TransitionQueueOptions) {
  const targets = [...options.targets];
  const windowMs = Math.max(0, Math.floor(options.windowMs));

  return async function queue(client: pg.PoolClient, transitions: readonly Transition[]): Promise<void> {
    if (transitions.length === 0 || targets.length === 0) return;
    await client.query(
      `INSERT INTO alert_outbox (target, provider, old_ok, new_ok, changed_at, next_attempt_at)
       SELECT t.target, c.provider, c.old_ok, c.new_ok, c.changed_at, now() + make_interval(secs => $5::float8 / 1000)
         FROM unnest($1::text[], $2::boolean[], $3::boolean[], $4::timestamptz[]) WITH ORDINALITY
              AS c(provider, old_ok, new_ok, changed_at, n)
        CROSS JOIN unnest($6::text[]) AS t(target)
        ORDER BY t.target, c.n`,
      [
        transitions.map((c) => c.provider),
        transitions.map((c) => c.wasOk),
        transitions.map((c) => c.ok),
        transitions.map((c) => c.at),
        windowMs,
        targets,
      ],
    );
  };
}

/** Queues a budget notice (a provider's budget at 80 or 100 %) for every target, due at once. */
export async function queueBudgetNotice(
  pool: pg.Pool,
  targets: readonly string[],
  crossing: {
    provider: string;
    percent: number;
    calls: number;
    budget: number;
    period: 'month' | 'day';
    topUser: { name: string; calls: number } | null;
  },
): Promise<void> {
  if (targets.length === 0) return;
  await pool.query(
    `INSERT INTO alert_outbox (target, provider, old_ok, new_ok, changed_at, next_attempt_at,
                               budget_percent, budget_calls, budget_limit, budget_period,
                               budget_top_user, budget_top_calls)
     SELECT t.target, $2, true, true, now(), now(), $3, $4, $5, $6, $7, $8 FROM unnest($1::text[]) AS t(target)`,
    [
      targets,
      crossing.provider,
      crossing.percent,
      crossing.calls,
      crossing.budget,
      crossing.period,
      crossing.topUser?.name ?? null,
      crossing.topUser?.calls ?? null,
    ],
  );
}
