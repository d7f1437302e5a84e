/*
 * The admission statement (admit_api_requests, src/limits/admission.ts) alone: PostgreSQL's CPU for
 * one statement and for each request in it, at several batch sizes, read from the backend's own
 * /proc entry (the server must run on this machine). No Sift process and no HTTP: what the database
 * does for a batch, so that a new design of the statement can be measured against the old one.
 *
 *   npx tsx bench/admission-sql.ts                       (a database `sift_admission_bench` on
 *                                                          postgres://postgres@127.0.0.1:5432, made anew)
 *   SQL=variant.sql npx tsx bench/admission-sql.ts      the same after running variant.sql (e.g. a
 *                                                          CREATE OR REPLACE FUNCTION admit_api_requests …)
 *
 * DATABASE=<server URL, its database is left alone> (postgres://postgres@127.0.0.1:5432/postgres),
 * BATCHES=<requests a statement, comma-separated> (1,10,26: one request alone, and the batches of two
 * workers and of one process under the side by side's load), ROWS=<requests for each batch size>
 * (30000), KEYS=<API keys the requests rotate over, all of one user> (1000), LIMITED=0 (no rate
 * limits: the keys' rate rows are not read or written), METERED=0 (no monthly usage). The limits are
 * `npm run bench`'s, which never refuse; every statement records a usage receipt, as the ledger does.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { issueApiKey } from '../src/auth/api-keys.js';
import { createUser } from '../src/auth/users.js';
import { migrate } from '../src/db/migrate.js';
import { type AdmissionAsk, decideAdmissions } from '../src/limits/admission.js';

const server = process.env.DATABASE ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = 'sift_admission_bench';
const admin = new pg.Client(server);
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${name}`);
await admin.query(`CREATE DATABASE ${name}`);
await admin.end();
const url = new URL(server);
url.pathname = `/${name}`;
// One connection: one backend, whose CPU is the figure.
const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
await migrate(pool);
if (process.env.SQL) await pool.query(readFileSync(process.env.SQL, 'utf8'));
const user = await createUser(pool, { username: `bench${Date.now()}` });
const keys: { keyId: number; userId: number }[] = [];
for (let i = 0; i < Number(process.env.KEYS ?? 1000); i++)
  keys.push({ keyId: (await issueApiKey(pool, user.id)).id, userId: user.id });

const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const ticksPerSecond = 100;
/** The backend's CPU so far, ms (user and system time, /proc/<pid>/stat). */
const backendCpuMs = () => {
  const fields = readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
};
const settings = {
  limits: {
    burst: { limit: 100_000_000, windowSeconds: 60, text: '100000000/min' },
    sustained: { limit: 1_000_000_000, windowSeconds: 86_400, text: '1000000000/day' },
  },
  monthlyQuota: 0,
};
const process_ = '00000000-0000-4000-8000-000000000001';
let next = 0;
let statement = 0;
async function run(batch: number, statements: number): Promise<void> {
  for (let s = 0; s < statements; s++) {
    const asks: AdmissionAsk[] = [];
    for (let i = 0; i < batch; i++)
      asks.push({
        key: keys[next++ % keys.length]!,
        limited: process.env.LIMITED !== '0',
        metered: process.env.METERED !== '0',
        units: 1,
      });
    await decideAdmissions(pool, settings, asks, { process: process_, statement: ++statement });
  }
}

await run(10, 300); // warm-up: the backend's plans and caches
for (const batch of (process.env.BATCHES ?? '1,10,26').split(',').map(Number)) {
  const statements = Math.max(1, Math.round(Number(process.env.ROWS ?? 30_000) / batch));
  const cpu0 = backendCpuMs();
  const t0 = performance.now();
  await run(batch, statements);
  const cpu = backendCpuMs() - cpu0;
  const wall = performance.now() - t0;
  console.log(
    `batch ${batch}: ${((cpu / statements) * 1000).toFixed(0)} µs of PostgreSQL CPU a statement, ` +
      `${((cpu / (statements * batch)) * 1000).toFixed(1)} µs a request; ${((wall / statements) * 1000).toFixed(0)} µs a statement from here`,
  );
}
await pool.end();
const cleanup = new pg.Client(server);
await cleanup.connect();
await cleanup.query(`DROP DATABASE ${name}`);
await cleanup.end();
