import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool } from '../../src/db/pool.js';

export const TEST_DB_PREFIX = 'sift_test_';

/** The same server as `url`, another database. */
export function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface TestDatabase {
  name: string;
  url: string;
  /** A pool for the test's own queries (closed by drop()). */
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template. Call drop() in afterAll. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl');
  const template = inject('templateDb');
  const tplPid = template.split('_').pop();
  const name = `${TEST_DB_PREFIX}${randomBytes(5).toString('hex')}_${tplPid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (err) {
        // Two clones of one template at the same instant can collide; retry briefly.
        if (attempt >= 20 || (err as { code?: string }).code !== '55006') throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminUrl, name);
  const pool = createPool(url, { max: 5 });
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await c.end();
    },
  };
}

/** An empty database on the test server (not cloned from the migrated template). Call drop() in afterAll. */
export async function createEmptyDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl');
  const name = `${TEST_DB_PREFIX}empty_${randomBytes(5).toString('hex')}_${inject('templateDb').split('_').pop()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminUrl, name);
  const pool = createPool(url, { max: 2 });
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await c.end();
    },
  };
}
