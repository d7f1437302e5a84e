import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type StatusUpdate, upsertStatus } from '../providers/health-recorder.js';

/*
 * Provider state changes decided in Postgres (alerts for ALERT_WEBHOOK_URLS).
 *
 * The health recorder's status write (write-behind, never on a request's
 * path) runs this instead of its plain upsert, in its own transaction:
 *
 * 1. lock the providers' existing provider_status rows (FOR UPDATE, in slug
 *    order so two instances never deadlock) and read their state;
 * 2. the recorder's upsert (a newer observation wins), returning the rows it
 *    really changed;
 * 3. every row whose `ok` differs from the state read in 1 is a change (up to
 *    down, down to up): queued in alert_outbox, one row per webhook target.
 *
 * A second writer of the same provider waits at 1 until the first commits,
 * then reads the state the first wrote: each change is seen by exactly one
 * writer, whichever instance it runs on. A provider observed for the first
 * time (no row yet) has no old state: no alert. The outbox rows become due
 * after the digest window, so changes queued meanwhile go out together.
 */

/** The outbox's name for a webhook URL (the URL itself is never stored). */
export function targetOf(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex');
}

export interface TransitionWriterOptions {
  /** targetOf() of each webhook URL. */
  targets: readonly string[];
  /** How long a queued change waits for others to join its message (ms). */
  windowMs: number;
}

export function transitionWriter(options: TransitionWriterOptions) {
  const targets = [...options.targets];
  const windowMs = Math.max(0, Math.floor(options.windowMs));

  return async function writeStatus(client: pg.PoolClient, updates: readonly StatusUpdate[]): Promise<void> {
    const rows = [...updates].sort((a, b) => (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0));
    const slugs = rows.map((r) => r.provider);
    const before = await client.query<{ provider: string; ok: boolean; last_error: string }>(
      'SELECT provider, ok, last_error FROM provider_status WHERE provider = ANY($1::text[]) ORDER BY provider FOR UPDATE',
      [slugs],
    );
    const old = new Map(before.rows.map((r) => [r.provider, r]));

    const written = await upsertStatus<{ provider: string; ok: boolean; last_error: string; checked_at: Date }>(
      client,
      rows,
      'RETURNING s.provider, s.ok, s.last_error, s.checked_at',
    );

    const changes = written.rows.filter((r) => {
      const was = old.get(r.provider);
      return was !== undefined && was.ok !== r.ok;
    });
    if (changes.length === 0 || targets.length === 0) return;
    await client.query(
      `INSERT INTO alert_outbox (target, provider, old_ok, new_ok, last_error, changed_at, next_attempt_at)
       SELECT t.target, c.provider, NOT c.new_ok, c.new_ok, c.last_error, c.changed_at,
              now() + make_interval(secs => $6::float8 / 1000)
         FROM unnest($1::text[], $2::boolean[], $3::text[], $4::timestamptz[]) AS c(provider, new_ok, last_error, changed_at)
         CROSS JOIN unnest($5::text[]) AS t(target)`,
      [
        changes.map((c) => c.provider),
        changes.map((c) => c.ok),
        // Down: the error that took it down; back up: the error it recovered from.
        changes.map((c) => (c.ok ? (old.get(c.provider)?.last_error ?? '') : c.last_error)),
        changes.map((c) => c.checked_at),
        targets,
        windowMs,
      ],
    );
  };
}
