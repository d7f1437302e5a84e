import pg from 'pg';

export type Pool = pg.Pool;

export interface PoolOptions {
  max?: number;
  /** How long to wait for a connection before failing (ms). Keeps requests from hanging while the database is down. */
  connectionTimeoutMillis?: number;
}

/** The one pg Pool of the process. Errors on idle clients are logged, never fatal. */
export function createPool(url: string, options: PoolOptions = {}, onError?: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 1500,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: `sift:${process.pid}`,
    // A server-side bound on every statement; hot paths set tighter ones where they need to.
    statement_timeout: 10_000,
  });
  pool.on('error', (err) => onError?.(err));
  return pool;
}
