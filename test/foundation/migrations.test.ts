import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { TEST_DB_PREFIX, databaseUrl } from '../helpers/db.js';

/** An empty database (not cloned from the template), dropped after the file. */
const created: string[] = [];
async function emptyDatabase(): Promise<string> {
  const name = `${TEST_DB_PREFIX}empty_${Math.random().toString(16).slice(2, 10)}_${inject('templateDb').split('_').pop()}`;
  const admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  created.push(name);
  return databaseUrl(inject('adminUrl'), name);
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

describe('migrations', () => {
  it('apply every file once and are idempotent', async () => {
    const pool = createPool(await emptyDatabase());
    const first = await migrate(pool);
    expect(first.applied).toEqual(readMigrations().map((m) => m.name));
    const second = await migrate(pool);
    expect(second.applied).toEqual([]);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(rows[0].n).toBe(readMigrations().length);
    await pool.end();
  });

  it('run once when several instances start together on an empty database', async () => {
    const url = await emptyDatabase();
    const pools = Array.from({ length: 4 }, () => createPool(url));
    const results = await Promise.all(pools.map((p) => migrate(p)));
    const appliedTotal = results.flatMap((r) => r.applied);
    expect(appliedTotal.sort()).toEqual(
      readMigrations()
        .map((m) => m.name)
        .sort(),
    );
    const { rows } = await pools[0]!.query(
      'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version',
    );
    expect(rows.every((r) => r.n === 1)).toBe(true);
    await Promise.all(pools.map((p) => p.end()));
  });

  it('refuse to run when an applied file was changed', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sift-migrations-'));
    writeFileSync(path.join(dir, '0001_first.sql'), 'CREATE TABLE t1 (id int);');
    const pool = createPool(await emptyDatabase());
    await migrate(pool, dir);
    writeFileSync(path.join(dir, '0001_first.sql'), 'CREATE TABLE t1 (id bigint);');
    await expect(migrate(pool, dir)).rejects.toThrow(MigrationError);
    await expect(migrate(pool, dir)).rejects.toThrow(/0001_first\.sql changed after it was applied/);
    await pool.end();
  });

  it('roll back a failing file and record nothing for it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sift-migrations-'));
    writeFileSync(path.join(dir, '0001_ok.sql'), 'CREATE TABLE ok1 (id int);');
    writeFileSync(path.join(dir, '0002_bad.sql'), 'CREATE TABLE half (id int); SELECT no_such_function();');
    const pool = createPool(await emptyDatabase());
    await expect(migrate(pool, dir)).rejects.toThrow(/0002_bad\.sql failed/);
    const { rows } = await pool.query(
      "SELECT to_regclass('half') AS half, (SELECT count(*)::int FROM schema_migrations) AS n",
    );
    expect(rows[0]).toEqual({ half: null, n: 1 });
    await pool.end();
  });

  it('ship only well-named files', () => {
    expect(readMigrations(MIGRATIONS_DIR).length).toBeGreaterThan(0);
  });
});
