import pg from 'pg';

export type Pool = pg.Pool;

/** Server-side bound on every statement (ms); hot paths set tighter ones where they need to. */
export const STATEMENT_TIMEOUT_MS = 10_000;
/**
 * Client-side bound on every query (ms): how long the app waits for an answer
 * before giving the connection up. The server's statement_timeout cannot help
 * when the answer never arrives (a connection black-holed by the network), so
 * without this a query, the request awaiting it and its pool slot would wait
 * forever. A little longer than the statement timeout, so it never cuts a
 * statement the server is still allowed to finish.
 */
export const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 2000;
/**
 * Client-side bound for the queries on a request's path (API key lookup, rate
 * limits, usage read): a request whose database does not answer gets its 503
 * within this, not after the general bound.
 */
export const HOT_QUERY_TIMEOUT_MS = 3000;
/**
 * Server-side: a transaction left open by a client that vanished (its COMMIT
 * lost in a partition) is rolled back after this (ms), so its row locks do
 * not block the other instances' writes until TCP notices, which takes hours.
 * Sift's transactions send their statements back to back, never idle.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 5000;

/** `config` with its own client-side bound (pg reads `query_timeout` per query; its types leave it out). */
export function withQueryTimeout<I>(config: pg.QueryConfig<I>, timeoutMs: number): pg.QueryConfig<I> {
  return { ...config, query_timeout: timeoutMs } as pg.QueryConfig<I>;
}

/** An instance's connections for requests: one process has them all, WORKERS processes share them. */
export const POOL_MAX = 20;
/** The fewest a worker keeps, whatever the count: its limiter, usage and health writes overlap. */
const WORKER_POOL_MIN = 5;

/**
 * A worker's pool size: the instance's POOL_MAX split between its workers (at
 * least WORKER_POOL_MIN each), so that one per core on a large machine does
 * not exhaust PostgreSQL's max_connections (100 by default).
 */
export function workerPoolMax(workers: number): number {
  return Math.max(WORKER_POOL_MIN, Math.ceil(POOL_MAX / Math.max(1, workers)));
}

export interface PoolOptions {
  max?: number;
  /** How long to wait for a connection before failing (ms). Keeps requests from hanging while the database is down. */
  connectionTimeoutMillis?: number;
}

/** The one pg Pool of the process. Errors on idle clients are logged, never fatal. */
export function createPool(url: string, options: PoolOptions = {}, onError?: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? POOL_MAX,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 1500,
    // A backend costs PostgreSQL ~10 ms of CPU to start and as much again to exit (its page tables
    // are torn down): connections idle for a burst's gap stay open rather than churn.
    idleTimeoutMillis: 300_000,
    keepAlive: true,
    application_name: `sift:${process.pid}`,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
  });
  pool.on('error', (err) => onError?.(err));
  return pool;
}
