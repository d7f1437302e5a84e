import { createHash } from 'node:crypto';
import type { SessionStore } from '@fastify/session';
import type { Session } from 'fastify';
import type pg from 'pg';

/*
 * Web sign-in sessions in Postgres (table `sessions`), shared by every
 * instance. Rows are keyed by the SHA-256 of the session id, so the table
 * alone cannot be used to hijack a session. Expired rows are never read and
 * are pruned at most every PRUNE_INTERVAL_MS by the instance that writes.
 */

const DEFAULT_LIFETIME_MS = 14 * 24 * 3600 * 1000;
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

type Callback = (err?: unknown) => void;

function storageKey(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex');
}

function expiryOf(session: Session): Date {
  const expires = session.cookie?.expires;
  if (expires) {
    const date = new Date(expires);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return new Date(Date.now() + DEFAULT_LIFETIME_MS);
}

/** A database failure while loading a session: the page answers 503, not 500. */
function unavailable(cause: unknown): Error {
  return Object.assign(new Error('Session store unavailable', { cause }), { statusCode: 503 });
}

export class PgSessionStore implements SessionStore {
  private lastPrune = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly onPruneError: (err: unknown) => void = () => {},
  ) {}

  set(sessionId: string, session: Session, callback: Callback): void {
    this.pool
      .query(
        `INSERT INTO sessions (sid, data, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (sid) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
        [storageKey(sessionId), JSON.stringify(session), expiryOf(session)],
      )
      .then(() => {
        callback();
        this.pruneNowAndThen();
      }, callback);
  }

  get(sessionId: string, callback: (err: unknown, result?: Session | null) => void): void {
    this.pool
      .query<{ data: Session }>('SELECT data FROM sessions WHERE sid = $1 AND expires_at > now()', [
        storageKey(sessionId),
      ])
      .then(
        ({ rows }) => callback(null, rows[0]?.data ?? null),
        (err) => callback(unavailable(err)),
      );
  }

  destroy(sessionId: string, callback: Callback): void {
    this.pool.query('DELETE FROM sessions WHERE sid = $1', [storageKey(sessionId)]).then(() => callback(), callback);
  }

  /** Deletes expired sessions; returns how many. */
  async prune(): Promise<number> {
    const { rowCount } = await this.pool.query('DELETE FROM sessions WHERE expires_at <= now()');
    return rowCount ?? 0;
  }

  private pruneNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_INTERVAL_MS) return;
    this.lastPrune = now;
    this.prune().catch(this.onPruneError);
  }
}
