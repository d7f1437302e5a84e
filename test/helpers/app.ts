import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, parseConfig } from '../../src/config/index.js';
import { createPool } from '../../src/db/pool.js';
import type { TestDatabase } from './db.js';

/** A Config as the environment `env` would give (defaults otherwise), on the test database. */
export function testConfig(db: Pick<TestDatabase, 'url'> | null, env: Record<string, string> = {}): Config {
  return parseConfig({
    DATA_DIR: 'data/test-app',
    LOG_LEVEL: 'silent',
    PROBE_INTERVAL_SECONDS: '0',
    ...(db ? { DATABASE_URL: db.url } : {}),
    ...env,
  });
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  close(): Promise<void>;
}

/** Builds the real app (never listening) against the test database. */
export async function buildTestApp(db: TestDatabase, env: Record<string, string> = {}): Promise<TestApp> {
  const config = testConfig(db, env);
  const pool = createPool(db.url, { max: 10 });
  const app = await buildApp(config, { pool, logger: false });
  await app.ready();
  return {
    app,
    config,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}
