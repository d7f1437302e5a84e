import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { PROJECT_ROOT } from '../runtime/project-root.js';
import { withQueryTimeout } from './pool.js';

/*
 * Forward-only migrations: migrations/NNNN_concept.sql, each applied once in its
 * own transaction and recorded with the SHA-256 of its text. Runs under a
 * Postgres advisory lock so that instances starting together apply each file
 * once. A file whose text changed after it was applied stops the start.
 *
 * A baseline squashes the files before it into one: it lists each of them with
 * its checksum (`-- replaces NNNN_name.sql <sha256>`). A database that exactly
 * those files migrated is at the baseline already: their records are replaced by
 * the baseline's, and its text is not run. One that some of them, or other texts,
 * migrated stops the start. The files, their naming and the snapshot of the schema
 * they leave (docs/schema.sql): migrations/README.md.
 */

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');
const LOCK_KEY = 7_262_817_301; // arbitrary, constant: "sift migrations"
/**
 * A migration (and the wait for another instance's) may take as long as it
 * takes, beyond the pool's client-side query bound (pool.ts): the largest
 * timer Node accepts, about 24 days (pg reads 0 as "the pool's").
 */
const UNBOUNDED_MS = 2 ** 31 - 1;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
  /** For a baseline: the files it squashed, each with the checksum of its text. */
  replaces: { name: string; checksum: string }[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const seen = new Set<number>();
  return files.map((file) => {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new MigrationError(`migrations/${file}: name must look like NNNN_name.sql`);
    const version = Number(match[1]);
    if (seen.has(version)) throw new MigrationError(`migrations/${file}: version ${version} is used twice`);
    seen.add(version);
    const sql = readFileSync(path.join(dir, file), 'utf8');
    const replaces = [...sql.matchAll(/^-- replaces (\d{4}_[a-z0-9_]+\.sql) ([0-9a-f]{64})$/gm)].map((r) => ({
      name: r[1]!,
      checksum: r[2]!,
    }));
    return { version, name: file, sql, checksum: createHash('sha256').update(sql).digest('hex'), replaces };
  });
}

export interface MigrateResult {
  applied: string[];
}

export async function migrate(pool: pg.Pool, dir = MIGRATIONS_DIR): Promise<MigrateResult> {
  const migrations = readMigrations(dir);
  const client = await pool.connect();
  try {
    await client.query('SET statement_timeout = 0');
    await client.query(withQueryTimeout({ text: 'SELECT pg_advisory_lock($1)', values: [LOCK_KEY] }, UNBOUNDED_MS));
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
        'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
      );
      const applied = new Map(rows.map((r) => [r.version, r]));
      for (const m of migrations) {
        if (m.replaces.length > 0) await adoptBaseline(client, m, applied);
      }
      for (const m of migrations) {
        const row = applied.get(m.version);
        if (row && row.checksum !== m.checksum) {
          throw new MigrationError(
            `migrations/${m.name} changed after it was applied (checksum ${m.checksum.slice(0, 12)} ≠ recorded ${row.checksum.slice(0, 12)}); migrations are forward-only: add a new file instead`,
          );
        }
      }
      const done: string[] = [];
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          // The commit need not wait for its WAL to reach the disk: lost to an OS crash, the file and its
          // record go together and the file is applied at the next start; any later durable commit flushes it.
          await client.query('SET LOCAL synchronous_commit = off');
          await client.query(withQueryTimeout({ text: m.sql }, UNBOUNDED_MS));
          await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            m.checksum,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw new MigrationError(`migrations/${m.name} failed: ${(err as Error).message}`);
        }
        done.push(m.name);
      }
      return { applied: done };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    }
  } finally {
    client.release();
  }
}

type Applied = Map<number, { version: number; name: string; checksum: string }>;

/**
 * A database that the files a baseline squashed migrated, exactly those and nothing else up to
 * its version, is recorded as at the baseline; one that a part of them, or other texts, migrated
 * is refused (its schema is not the one the baseline makes). `applied` is updated to match.
 */
async function adoptBaseline(client: pg.PoolClient, baseline: Migration, applied: Applied): Promise<void> {
  if (applied.get(baseline.version)?.name === baseline.name) return;
  const before = [...applied.values()].filter((r) => r.version <= baseline.version);
  if (before.length === 0) return;
  const recorded = before.map((r) => `${r.name} ${r.checksum}`).sort();
  const expected = baseline.replaces.map((r) => `${r.name} ${r.checksum}`).sort();
  if (recorded.join('\n') !== expected.join('\n')) {
    const missing = expected.filter((e) => !recorded.includes(e)).map((e) => e.split(' ')[0]);
    const other = recorded.filter((e) => !expected.includes(e)).map((e) => e.split(' ')[0]);
    throw new MigrationError(
      `migrations/${baseline.name} squashes files this database was not migrated by exactly (missing: ${missing.join(', ') || 'none'}; not among them: ${other.join(', ') || 'none'}): migrate it with the files before the baseline first, or start from an empty database`,
    );
  }
  await client.query('BEGIN');
  try {
    await client.query('DELETE FROM schema_migrations WHERE version <= $1', [baseline.version]);
    await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
      baseline.version,
      baseline.name,
      baseline.checksum,
    ]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
  for (const r of before) applied.delete(r.version);
  applied.set(baseline.version, { version: baseline.version, name: baseline.name, checksum: baseline.checksum });
}
