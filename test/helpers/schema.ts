import type pg from 'pg';

/*
 * The schema of a database as lines of text, read from the catalogs: what two databases must share
 * to be the same schema (relations and their persistence and options, columns, constraints, indexes,
 * functions with their bodies, types, triggers, sequences, extensions), whichever server version
 * and whatever migrated them. Owners, privileges and comments are left out.
 */

const QUERIES = [
  `SELECT format('relation %s kind=%s persistence=%s options=%s', c.relname, c.relkind, c.relpersistence,
                 coalesce(array_to_string(c.reloptions, ','), ''))
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c')`,
  `SELECT format('column %s.%s %s notnull=%s default=%s identity=%s generated=%s storage=%s position=%s', c.relname,
                 a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                 coalesce(pg_get_expr(d.adbin, d.adrelid), ''), a.attidentity, a.attgenerated, a.attstorage,
                 row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum))
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c') AND a.attnum > 0
      AND NOT a.attisdropped`,
  `SELECT format('constraint %s %s %s', c.relname, k.conname, pg_get_constraintdef(k.oid))
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public'`,
  `SELECT 'index ' || pg_get_indexdef(i.indexrelid)
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public'`,
  `SELECT 'function ' || pg_get_functiondef(p.oid)
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')`,
  `SELECT 'trigger ' || pg_get_triggerdef(t.oid)
     FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND NOT t.tgisinternal`,
  `SELECT format('type %s %s %s', t.typname, t.typtype,
                 coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e
                            WHERE e.enumtypid = t.oid), format_type(t.typbasetype, t.typtypmod)))
     FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'c')
      AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')`,
  `SELECT format('sequence %s %s start=%s increment=%s min=%s max=%s cache=%s cycle=%s owned_by=%s',
                 s.sequencename, s.data_type, s.start_value, s.increment_by, s.min_value, s.max_value,
                 s.cache_size, s.cycle,
                 (SELECT d.refobjid::regclass || '.' || a.attname FROM pg_depend d
                    JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                   WHERE d.objid = format('%I.%I', s.schemaname, s.sequencename)::regclass
                     AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
     FROM pg_sequences s WHERE s.schemaname = 'public'`,
  `SELECT 'extension ' || extname FROM pg_extension WHERE extname <> 'plpgsql'`,
];

/** The lines describing the public schema of the database `client` is connected to, sorted. */
export async function describeSchema(client: pg.Pool | pg.Client): Promise<string[]> {
  const lines: string[] = [];
  for (const text of QUERIES) {
    const { rows } = await client.query<{ line: string }>({ text: `SELECT line FROM (${text}) AS q(line)` });
    lines.push(...rows.map((r) => r.line));
  }
  return lines.sort();
}

/** The text of a `pg_dump --schema-only` file without psql's meta-commands, to run as one query. */
export function dumpAsQuery(dump: string): string {
  return dump
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n');
}
