import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { type Config, parseConfig } from '../../src/config/index.js';
import { createPool } from '../../src/db/pool.js';
import { monthlySearches } from '../../src/limits/usage.js';
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

/** API throttle limits no test reaches, for files that test something other than the limits. */
export const UNTHROTTLED = { API_THROTTLE_BURST: '100000/min', API_THROTTLE_SUSTAINED: '1000000/day' };

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

/** The searches counted for `userId` this month, once `t` has written what it counted. */
export async function searchesCounted(t: TestApp, db: Pick<TestDatabase, 'pool'>, userId: number): Promise<number> {
  await t.app.lifecycle.flush();
  return monthlySearches(db.pool, userId);
}

/** The provider_status row of `provider` (undefined: none yet), once `t` has written what it recorded. */
export async function providerStatusRow(
  t: TestApp,
  db: Pick<TestDatabase, 'pool'>,
  provider: string,
): Promise<{ ok: boolean; last_error: string } | undefined> {
  await t.app.health.recorder.flush();
  const { rows } = await db.pool.query('SELECT ok, last_error FROM provider_status WHERE provider = $1', [provider]);
  return rows[0] as { ok: boolean; last_error: string } | undefined;
}
