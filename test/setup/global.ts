import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { testEnvironment } from '../../src/config/index.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { TEST_DB_PREFIX, databaseUrl } from '../helpers/db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
  }
}

/**
 * One PostgreSQL server for the whole run: TEST_DATABASE_URL when set,
 * otherwise an embedded server in data/test. A migrated template database
 * is created once; every test file clones its own database from it.
 */
export default async function setup(project: TestProject) {
  const env = testEnvironment();
  let adminUrl = env.databaseUrl;
  let stop: (() => Promise<void>) | undefined;
  if (!adminUrl) {
    const embedded = await startEmbeddedPostgres({
      dataDir: path.resolve('data/test'),
      databaseName: 'postgres',
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
    });
    adminUrl = embedded.adminUrl;
    stop = () => embedded.stop();
  }

  const templateDb = `${TEST_DB_PREFIX}tpl_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDb}`);
  await admin.query(`CREATE DATABASE ${templateDb}`);
  const pool = createPool(databaseUrl(adminUrl, templateDb));
  await migrate(pool);
  await pool.end();
  await admin.query(`ALTER DATABASE ${templateDb} WITH ALLOW_CONNECTIONS false`).catch(() => {});
  await admin.end();

  project.provide('adminUrl', adminUrl);
  project.provide('templateDb', templateDb);

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${TEST_DB_PREFIX}%_${process.pid}%`,
    ]);
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
    await client.query(`DROP DATABASE IF EXISTS ${templateDb} WITH (FORCE)`).catch(() => {});
    await client.end();
    if (!env.keepData) await stop?.();
  };
}
