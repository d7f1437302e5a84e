import { isIP } from 'node:net';
import type pg from 'pg';

/*
 * Slows down password guessing on the sign-in form. Each attempt is counted BEFORE its password is
 * checked, in one database call that either takes it or says how long to wait (migration 0011), so
 * guesses sent in parallel cost what the same guesses cost one after another.
 *
 * Counted per client (its address; an IPv6 client by its /64, the network one host usually holds)
 * and per client and username, never per username alone: guesses at someone's account from one
 * client slow that client down and lock nobody else out. Existing and unknown usernames count alike,
 * so the throttle tells nothing about which accounts exist. From a threshold on, each attempt
 * blocks its client (or client and username) for a delay that starts at 1 s and doubles up to
 * MAX_DELAY_S; attempts made while blocked are refused unchecked and not counted. So a few typos
 * cost nothing, while a guesser is held to a handful of tries per hour. A count starts afresh an
 * hour after its last attempt; a sign-in that succeeds clears its username's count for the client
 * and gives its attempt back to the client's.
 */

export const CLIENT_USER_THRESHOLD = 5;
export const CLIENT_THRESHOLD = 20;
export const FIRST_DELAY_S = 1;
export const MAX_DELAY_S = 15 * 60;
const WINDOW_S = 3600;
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

function userKey(username: string): string {
  return username.trim().toLowerCase().slice(0, 200);
}

/**
 * The client an address stands for: an IPv4 address (also when written IPv4-mapped), or the /64 of
 * an IPv6 address, which one host or home network usually holds whole.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  // A dotted IPv4 tail (64:ff9b::1.2.3.4) stands for two groups.
  const width = (parts: string[]) => parts.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const left = groups(head);
  const right = groups(tail);
  const full = tail === undefined ? left : [...left, ...Array(8 - width(left) - width(right)).fill('0'), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export interface LoginThrottleOptions {
  /** The clock (tests move it); default the system's. */
  now?: () => Date;
}

export function createLoginThrottle(pool: pg.Pool, options: LoginThrottleOptions = {}) {
  const now = options.now ?? (() => new Date());
  let lastPrune = 0;

  const keys = (ip: string, username: string) => {
    const client = clientKey(ip);
    return { client, clientUser: `${client} ${userKey(username)}` };
  };

  return {
    /**
     * Takes one attempt of this client at this username: 0 when taken (the password may be checked
     * now), else the seconds to wait, and nothing was counted.
     */
    async take(ip: string, username: string): Promise<number> {
      const { client, clientUser } = keys(ip, username);
      const at = now();
      const { rows } = await pool.query<{ wait: number }>(
        'SELECT sign_in_attempt_take($1, $2, $3, $4, $5, $6, $7, $8) AS wait',
        [client, clientUser, CLIENT_THRESHOLD, CLIENT_USER_THRESHOLD, FIRST_DELAY_S, MAX_DELAY_S, WINDOW_S, at],
      );
      if (at.getTime() - lastPrune > PRUNE_INTERVAL_MS) {
        lastPrune = at.getTime();
        await pool.query(`DELETE FROM sign_in_attempts WHERE last_attempt_at < $1::timestamptz - interval '1 day'`, [
          at,
        ]);
      }
      return Math.max(0, rows[0]?.wait ?? 0);
    },

    /** The attempt taken for this client and username signed in. */
    async succeeded(ip: string, username: string): Promise<void> {
      const { client, clientUser } = keys(ip, username);
      await pool.query('SELECT sign_in_attempt_succeeded($1, $2, $3)', [client, clientUser, CLIENT_THRESHOLD]);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
