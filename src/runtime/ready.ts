import { isIP } from 'node:net';
import type pg from 'pg';
import type pino from 'pino';

/*
 * What a server says once it listens, in one process or as a cluster's
 * primary (never per worker): where it is, and, on a database with no user
 * yet, the command that creates the first one (README, Quick start).
 */

/** The command that creates the first account (a staff one, so it can manage the others). */
export const CREATE_FIRST_USER = 'npm run cli -- create-user admin --staff';

/** The URL a person opens for a server listening on `host`:`port`; a wildcard address is reached as localhost. */
export function serverUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::') return `http://localhost:${port}`;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** Does the database have any user? Asked at start-up, for the ready line's hint. */
export async function usersExist(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM users) AS any');
  return rows[0]?.any === true;
}

/** Who can reach a server bound to `host`, for the ready line. */
export function reachOf(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'every network interface';
  if (host === 'localhost' || host === '::1' || /^127\./.test(host)) return 'this machine only';
  return `the interface of ${host}`;
}

export interface ReadyFacts {
  url: string;
  /** The address bound (HOST). */
  host: string;
  /** Time from the process's start to listening. */
  ms: number;
  /** Set for a cluster: how many workers listen. */
  workers?: number;
  usersExist: boolean;
}

/** The `ready` line with the server's URL, then the first user's command when there is none. */
export function logReady(log: pino.Logger, facts: ReadyFacts): void {
  const { url, host, ms, workers } = facts;
  // Which address it listens on, and so who can reach it (HOST).
  const where = { url, host, reachable_from: reachOf(host) };
  log.info(workers === undefined ? { ...where, ms } : { ...where, ms, workers }, 'ready');
  if (!facts.usersExist) log.info(`no user yet; create the first one: ${CREATE_FIRST_USER}`);
}
