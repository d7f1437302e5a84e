import type pg from 'pg';

/*
 * Slows down password guessing on the sign-in form. Failures are counted per
 * client IP and per username (existing or not, so the throttle tells nothing
 * about which accounts exist). From the threshold on, each failure blocks
 * that IP or username for a delay that starts at 1 s and doubles up to
 * MAX_DELAY_S; attempts made while blocked are refused unchecked and not
 * counted. So a few typos cost nothing, while a guesser is held to a handful
 * of tries per hour. A count starts afresh an hour after its last failure; a
 * successful sign-in clears the username's count (not the IP's).
 */

export const USER_THRESHOLD = 5;
export const IP_THRESHOLD = 20;
const FIRST_DELAY_S = 1;
const MAX_DELAY_S = 15 * 60;
const WINDOW = '1 hour';
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

type Scope = 'ip' | 'user';

function userKey(username: string): string {
  return username.trim().toLowerCase().slice(0, 200);
}

/** Seconds of delay after `failures` failures against `threshold` (0 below it). */
export function blockSeconds(failures: number, threshold: number): number {
  if (failures < threshold) return 0;
  return Math.min(MAX_DELAY_S, FIRST_DELAY_S * 2 ** Math.min(failures - threshold, 16));
}

export function createLoginThrottle(pool: pg.Pool) {
  let lastPrune = 0;

  async function recordOne(scope: Scope, key: string, threshold: number): Promise<void> {
    const { rows } = await pool.query<{ failures: number }>(
      `INSERT INTO login_failures (scope, key, failures, last_failure_at) VALUES ($1, $2, 1, now())
       ON CONFLICT (scope, key) DO UPDATE SET
         failures = CASE WHEN login_failures.last_failure_at < now() - interval '${WINDOW}' THEN 1
                         ELSE login_failures.failures + 1 END,
         last_failure_at = now()
       RETURNING failures`,
      [scope, key],
    );
    const seconds = blockSeconds(rows[0]!.failures, threshold);
    if (seconds > 0) {
      await pool.query(
        `UPDATE login_failures SET blocked_until = now() + make_interval(secs => $3) WHERE scope = $1 AND key = $2`,
        [scope, key, seconds],
      );
    }
  }

  return {
    /** Seconds until this IP or username may try again; 0 when it may now. */
    async retryAfter(ip: string, username: string): Promise<number> {
      const { rows } = await pool.query<{ seconds: number | null }>(
        `SELECT ceil(extract(epoch FROM max(blocked_until) - now()))::int AS seconds FROM login_failures
          WHERE ((scope = 'ip' AND key = $1) OR (scope = 'user' AND key = $2)) AND blocked_until > now()`,
        [ip, userKey(username)],
      );
      return Math.max(0, rows[0]?.seconds ?? 0);
    },

    async recordFailure(ip: string, username: string): Promise<void> {
      await recordOne('ip', ip, IP_THRESHOLD);
      if (userKey(username)) await recordOne('user', userKey(username), USER_THRESHOLD);
      if (Date.now() - lastPrune > PRUNE_INTERVAL_MS) {
        lastPrune = Date.now();
        await pool.query(`DELETE FROM login_failures WHERE last_failure_at < now() - interval '1 day'`);
      }
    },

    async recordSuccess(username: string): Promise<void> {
      await pool.query(`DELETE FROM login_failures WHERE scope = 'user' AND key = $1`, [userKey(username)]);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
