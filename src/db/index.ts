import type pg from 'pg';
import type { Config } from '../config/index.js';
import { type EmbeddedLogger, type EmbeddedPostgres, startEmbeddedPostgres } from './embedded.js';
import type { PoolOptions } from './pool.js';

export interface Database {
  pool: pg.Pool;
  url: string;
  /** Present when Sift runs its own embedded server. */
  embedded?: EmbeddedPostgres;
  close(): Promise<void>;
}

/**
 * Connects to DATABASE_URL, or (unset) starts or joins the embedded server in DATA_DIR.
 */
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'> & Partial<Pick<Config, 'PORT'>>,
  logger?: EmbeddedLogger & { error(obj: unknown, msg?: string): void },
  poolOptions: PoolOptions = {},
): Promise<Database> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.DATABASE_URL;
  if (!url) {
    // Not the port the HTTP server is about to listen on.
    const avoidPorts = config.PORT ? [config.PORT] : [];
    // The server's start (and the CLI's, which starts the same cluster) may take the build's spare cluster.
    embedded = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, logger, avoidPorts, takeSpare: true });
    url = embedded.url;
  }
  // Loaded here, with pg: the embedded server starts without waiting for pg to load (embedded.ts).
  const { createPool } = await import('./pool.js');
  const pool = createPool(url, poolOptions, (err) => logger?.error({ err }, 'idle database client error'));
  let closed = false;
  return {
    pool,
    url,
    embedded,
    async close() {
      if (closed) return;
      closed = true;
      await pool.end().catch(() => {});
      await embedded?.stop();
    },
  };
}
