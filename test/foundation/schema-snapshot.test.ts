import { copyFileSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../../src/db/migrate.js';
import { PROJECT_ROOT } from '../../src/runtime/project-root.js';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { describeSchema, dumpAsQuery } from '../helpers/schema.js';

/** The migration files 0001-0013 as they were before the baseline squashed them. */
const PRE_BASELINE_DIR = path.join(PROJECT_ROOT, 'test', 'fixtures', 'pre-baseline-migrations');
const SNAPSHOT = path.join(PROJECT_ROOT, 'docs', 'schema.sql');

const databases: TestDatabase[] = [];
async function empty(): Promise<TestDatabase> {
  const db = await createEmptyDatabase();
  databases.push(db);
  return db;
}
afterAll(async () => {
  for (const db of databases) await db.drop();
});

/** A directory holding `files` of `from`. */
function dirWith(from: string, files: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sift-migrations-'));
  for (const f of files) copyFileSync(path.join(from, f), path.join(dir, f));
  return dir;
}

const baseline = readMigrations().find((m) => m.replaces.length > 0)!;

describe('schema snapshot and baseline', () => {
  it('docs/schema.sql is the schema every migration leaves (npm run schema-snapshot rewrites it)', async () => {
    const migrated = await createTestDatabase();
    databases.push(migrated);
    const fromSnapshot = await empty();
    // On a connection of its own: the dump empties the search_path of the session that runs it.
    const loader = new pg.Client({ connectionString: fromSnapshot.url });
    await loader.connect();
    await loader.query(dumpAsQuery(readFileSync(SNAPSHOT, 'utf8')));
    await loader.end();
    expect(
      await describeSchema(fromSnapshot.pool),
      'docs/schema.sql differs from the migrations: run npm run schema-snapshot and commit it',
    ).toEqual(await describeSchema(migrated.pool));
  });

  it('the baseline alone makes the schema the files it squashed left', async () => {
    const old = await empty();
    await migrate(old.pool, PRE_BASELINE_DIR);
    const fresh = await empty();
    await migrate(fresh.pool, dirWith(MIGRATIONS_DIR, [baseline.name]));
    expect(await describeSchema(fresh.pool)).toEqual(await describeSchema(old.pool));
    expect(baseline.replaces.map((r) => r.name)).toEqual(readdirSync(PRE_BASELINE_DIR).sort());
  });

  it('a database the squashed files migrated is taken as at the baseline and gets every later file', async () => {
    const old = await empty();
    await migrate(old.pool, PRE_BASELINE_DIR);
    const upgraded = await migrate(old.pool);
    expect(upgraded.applied).toEqual(
      readMigrations()
        .filter((m) => m.version > baseline.version)
        .map((m) => m.name),
    );
    const { rows } = await old.pool.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.name)).toEqual(readMigrations().map((m) => m.name));

    const fresh = await empty();
    await migrate(fresh.pool);
    expect(await describeSchema(old.pool)).toEqual(await describeSchema(fresh.pool));
    expect((await migrate(old.pool)).applied).toEqual([]);
  });

  it('a database only some of the squashed files migrated is refused, untouched', async () => {
    const part = await empty();
    const some = readdirSync(PRE_BASELINE_DIR).sort().slice(0, 5);
    await migrate(part.pool, dirWith(PRE_BASELINE_DIR, some));
    const before = await describeSchema(part.pool);
    await expect(migrate(part.pool)).rejects.toThrow(
      /squashes files this database was not migrated by exactly \(missing: 0006_rate_buckets\.sql/,
    );
    expect(await describeSchema(part.pool)).toEqual(before);
  });
});
