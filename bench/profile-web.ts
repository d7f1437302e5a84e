/*
 * Ad-hoc profiling helper: Sift (dist/) under load (web search by default) against every upstream's fake.
 * PROF=1 writes a V8 CPU profile of each server process (W=<workers>: each worker's and the primary's) into
 * bench/results/profile-<time>/ (open one in Chrome DevTools), and once the server has stopped prints their
 * summary, self time by module (bench/profile-summary.ts), which it also writes there as summary.md.
 * The side by side's load (bench/README.md, section side): KEYS=1000, the default path and 100 connections.
 * PERF=1 records the measured window with Linux perf (`perf record -e cpu-clock -g`, every thread of the server:
 * V8's compiler and GC threads too, which a V8 CPU profile leaves out, and the kernel's side of system calls)
 * into bench/results/perf-<time>.data, the server running with --perf-basic-prof so that perf names the compiled
 * JavaScript (`perf report -i <file> --no-children --sort sym`). A V8 CPU profile puts the time of builtins and
 * runtime calls (a Map lookup, a number's toString, libm) on whichever JavaScript frame it last saw; perf shows them.
 * W=<WORKERS> (default 1), C=<connections> (default 100), KEYS=<API keys the load rotates over> (default 500), D=<seconds> (default 10), LL=<log level> (default info),
 * FLOOR=1 puts the fan-out floor (bench/floor-fanout.ts) under the same load instead of Sift, FLOOR=json the bare JSON route (bench/floor-json.ts).
 * SIFT_LOG=<file for Sift's stdout> (default: discarded), SIFT_NODE_OPTIONS=<NODE_OPTIONS for Sift only>, SIFT_NODE_ARGS=<node flags of the server under load, Sift or the floor>,
 * P=<path and query up to the query text> (default /api/v1/web/?q=prof+; e.g. /api/v1/suggest/?q=prof+), the
 * request counter appended, or put where P says {n}; several paths separated by spaces are taken in turn
 * (P='/api/v1/instant/?q={n}+km+in+miles /api/v1/instant/?q=md5+hello+{n}').
 * PG_STATEMENTS=1 loads pg_stat_statements into the embedded PostgreSQL and prints, for the measured window, each
 * statement's calls and execution time per request (what the database does for one search); PG_TOP=<statements> (15).
 * WARM_P=<paths, as P> warms the server up on those for WARM_D seconds (default 5) before P's own warm-up: every
 * endpoint first, as `npm run bench` does, leaves the code that they share compiled for all of them.
 * HEAP=1 samples what the server's processes (Sift's, or the floor's) allocate during the measured window (bench/heap-sampler.mjs)
 * into bench/results/heap-<time>/ and prints KB a request by module and function (bench/heap-summary.ts): the
 * garbage collector's work comes from there. HEAP=survivors counts only what lived through a young-generation
 * collection (what the scavenger copies and promotes). The sampler's own work is in a HEAP run's CPU figures, and
 * what it keeps of every sample in its RSS: read those from a run without it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { childPids, cpuMsOf, postgresCpuMs, serverNodeFlags } from './proc.js';
import { heapSummaryMarkdown, readHeapProfiles, summarizeHeap } from './heap-summary.js';
import { monotonicUs, readProfiles, summarize, summaryMarkdown } from './profile-summary.js';
import { rotatingLoad } from './rotating-load.js';
import { startAllFakes } from '../test/fakes/all.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createPool } from '../src/db/pool.js';
import { createUser } from '../src/auth/users.js';
import { issueApiKey } from '../src/auth/api-keys.js';
import { migrate } from '../src/db/migrate.js';

const fakes = await startAllFakes({ latencyMs: 50 });
const pgStatements = Boolean(process.env.PG_STATEMENTS);
const pg = await startEmbeddedPostgres({
  dataDir: 'bench/results/profile-data',
  settings: pgStatements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {},
});
const pool = createPool(pg.url);
await migrate(pool);
if (pgStatements) await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
const u = await createUser(pool, { username: 'p' + Date.now() });
const keys: string[] = [];
for (let i = 0; i < Number(process.env.KEYS ?? 500); i++) keys.push((await issueApiKey(pool, u.id)).key);
await pool.end();
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const profDir = process.env.PROF ? `bench/results/profile-${new Date().toISOString().replace(/[:.]/g, '-')}` : '';
if (profDir) mkdirSync(path.join(root, profDir), { recursive: true });
const profFlags = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
// HEAP: the heap sampler in each server process, switched on and off around the measured window (SIGWINCH).
const heapSamples = process.env.HEAP === 'survivors' ? 'survivors' : process.env.HEAP ? 'allocated' : '';
const heapDir = heapSamples
  ? path.join(root, `bench/results/heap-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  : '';
if (heapDir) mkdirSync(heapDir, { recursive: true });
const heapFlags = heapDir ? ['--import', path.join(root, 'bench/heap-sampler.mjs')] : [];
// Node flags of the server under load, Sift's or the floor's (e.g. --perf-basic-prof for `perf`).
const nodeArgs = [
  ...(process.env.SIFT_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ...(process.env.PERF ? ['--perf-basic-prof'] : []),
];
// FLOOR=1: the fan-out floor (bench/floor-fanout.ts) instead of Sift, under the same load.
const floor = Boolean(process.env.FLOOR);
const child = floor
  ? spawn(
      process.execPath,
      [
        ...profFlags,
        ...heapFlags,
        ...nodeArgs,
        '--import',
        'tsx',
        ...(process.env.FLOOR === 'json'
          ? ['bench/floor-json.ts']
          : ['bench/floor-fanout.ts', JSON.stringify(fakes.env)]),
      ],
      {
        cwd: root,
        env: { ...process.env, HEAP_PROFILE_DIR: heapDir, HEAP_SAMPLES: heapSamples },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
  : spawn(process.execPath, [...profFlags, ...heapFlags, ...serverNodeFlags(root), ...nodeArgs, 'dist/server.js'], {
      cwd: root,
      env: {
        ...process.env,
        ...fakes.env,
        HEAP_PROFILE_DIR: heapDir,
        HEAP_SAMPLES: heapSamples,
        DATABASE_URL: pg.url,
        WORKERS: process.env.W ?? '1',
        PORT: '8345',
        HOST: '127.0.0.1',
        PROBE_INTERVAL_SECONDS: '0',
        LOG_LEVEL: process.env.LL ?? 'info',
        NODE_OPTIONS: process.env.SIFT_NODE_OPTIONS ?? '',
      },
      stdio: ['ignore', process.env.SIFT_LOG ? openSync(process.env.SIFT_LOG, 'w') : 'ignore', 'inherit'],
    });
const base = floor
  ? await new Promise<string>((resolve) => {
      let buf = '';
      child.stdout!.on('data', (c: Buffer) => {
        buf += c.toString();
        if (buf.includes('\n')) resolve((JSON.parse(buf.slice(0, buf.indexOf('\n'))) as { url: string }).url);
      });
    })
  : 'http://127.0.0.1:8345';
for (;;) {
  try {
    if (floor || (await fetch(`${base}/up`)).ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 50));
}
const paths = (process.env.P ?? '/api/v1/web/?q=prof+').split(' ').filter(Boolean);
const pathIn =
  (list: string[]) =>
  (i: number): string => {
    const p = list[i % list.length]!;
    return p.includes('{n}') ? p.replaceAll('{n}', String(i)) : `${p}${i}`;
  };
const pathFor = pathIn(paths);
// WARM_P: the warm-up's own paths (as P), e.g. every endpoint before one is measured, as in `npm run bench`.
const warmPaths = (process.env.WARM_P ?? '').split(' ').filter(Boolean);
// W=<workers>: the whole server's CPU, the primary's and its workers'.
const cpuMs = (): number => [child.pid!, ...childPids(child.pid!)].reduce((n, p) => n + cpuMsOf(p), 0);
const pgCpuMs = postgresCpuMs;
/** perf record of the server's processes (W=<workers>: each) for `seconds`; resolves to the data file. */
function startPerf(seconds: number): Promise<string> {
  const file = `bench/results/perf-${Date.now()}.data`;
  const pids = [child.pid!, ...childPids(child.pid!)].join(',');
  const args = [
    'record',
    '-q',
    '-e',
    'cpu-clock',
    '-F',
    '2000',
    '-g',
    '-p',
    pids,
    '-o',
    file,
    '--',
    'sleep',
    String(seconds),
  ];
  const rec = spawn('perf', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    rec.on('error', reject);
    rec.on('exit', (code) => (code === 0 ? resolve(file) : reject(new Error(`perf record exited with ${code}`))));
  });
}
const generate = rotatingLoad({ connections: Number(process.env.C ?? 100), path: pathFor, keys });
const load = (duration: number) => generate(base, duration);
const warm =
  warmPaths.length > 0
    ? await rotatingLoad({ connections: Number(process.env.C ?? 100), path: pathIn(warmPaths), keys })(
        base,
        Number(process.env.WARM_D ?? 5),
      )
    : await load(3); // warm-up
if (warmPaths.length > 0) await load(3); // then the measured paths' own warm-up
/** Transactions committed by the whole database cluster (Sift's statements, one transaction each). */
const commits = async (): Promise<number> => {
  const client = createPool(pg.url);
  const r = await client.query<{ n: string }>('SELECT sum(xact_commit)::text AS n FROM pg_stat_database');
  await client.end();
  return Number(r.rows[0]!.n);
};
const commits0 = await commits();
if (pgStatements) {
  const client = createPool(pg.url);
  await client.query('SELECT pg_stat_statements_reset()');
  await client.end();
}
const cpu0 = cpuMs();
const pgCpu0 = pgCpuMs();
const perf = process.env.PERF ? startPerf(Number(process.env.D ?? 10)) : undefined;
const serverPids = (): number[] => [child.pid!, ...childPids(child.pid!)];
/** The server's processes switched on (HEAP), so switched off again after the window. */
let sampled: number[] = [];
/** Switches every server process's heap sampler (HEAP): on before the measured window, off (writing it) after. */
const toggleHeapSampler = () => {
  if (!heapDir) return;
  // Node's processes only: the sampler is in those (another child of the server has none).
  const isNode = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'node';
    } catch {
      return false;
    }
  };
  const pids = sampled.length === 0 ? serverPids().filter(isNode) : sampled;
  sampled = pids.filter((p) => {
    try {
      process.kill(p, 'SIGWINCH');
      return true;
    } catch {
      return false; // gone meanwhile
    }
  });
};
toggleHeapSampler();
const measuredFromUs = monotonicUs();
const r = await load(Number(process.env.D ?? 10));
const measuredToUs = monotonicUs();
toggleHeapSampler();
if (perf) console.log('perf data', await perf);
const cpu = cpuMs() - cpu0;
const pgCpu = pgCpuMs() - pgCpu0;
const statements = (await commits()) - commits0 - 1;
console.log(
  'rps',
  r.requests.average,
  'p50',
  r.latency.p50,
  'p99',
  r.latency.p99,
  'non2xx',
  r.non2xx,
  'cpu ms/req',
  (cpu / r.requests.total).toFixed(3),
  'requests incl. warm-up',
  warm.requests.total + r.requests.total,
  'postgres cpu ms/req (all postgres processes)',
  (pgCpu / r.requests.total).toFixed(3),
  'statements/s',
  (statements / Number(process.env.D ?? 10)).toFixed(0),
);
if (pgStatements) {
  const client = createPool(pg.url);
  const rows = await client.query<{ calls: string; ms: number; rows: string; query: string }>(
    `SELECT calls::text, total_exec_time AS ms, rows::text, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' ORDER BY total_exec_time DESC LIMIT ${Number(process.env.PG_TOP ?? 15)}`,
  );
  await client.end();
  const n = r.requests.total;
  console.log('statement calls/request, exec ms/request, rows/call:');
  for (const row of rows.rows)
    console.log(
      `${(Number(row.calls) / n).toFixed(3)}\t${(row.ms / n).toFixed(4)}\t${(Number(row.rows) / Math.max(1, Number(row.calls))).toFixed(1)}\t${row.query}`,
    );
}
if (heapDir) {
  // Each process writes its profile once the sampler stops: wait for all of them (at most 10 s).
  const expected = sampled.length;
  const heapFiles = () => readdirSync(heapDir).filter((f) => f.endsWith('.heapprofile'));
  for (let waited = 0; heapFiles().length < expected && waited < 10_000; waited += 100)
    await new Promise((r) => setTimeout(r, 100));
  const files = heapFiles().map((f) => path.join(heapDir, f));
  const summary = [
    `Load: P=${paths.join(' ')}, ${process.env.C ?? 100} connections, ${keys.length} keys, W=${process.env.W ?? '1'}, ${process.env.D ?? 10} s measured: ${r.requests.total} requests; ${heapSamples === 'survivors' ? 'what lived through a young-generation collection' : 'allocated'}; profiles: ${files.map((f) => path.basename(f)).join(', ')}.`,
    '',
    heapSummaryMarkdown(summarizeHeap(readHeapProfiles(files), root, r.requests.total), Number(process.env.TOP ?? 25)),
  ].join('\n');
  writeFileSync(path.join(heapDir, 'summary.md'), `${summary}\n`);
  console.log(`\n${summary}\n\nsummary written to ${path.relative(root, path.join(heapDir, 'summary.md'))}`);
}
const st = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)?.[1];
console.log('rss MB', Number(st) / 1024);
child.kill('SIGTERM');
await new Promise((r) => child.on('exit', r));
await fakes.close();
await pg.stop();
if (profDir) {
  // Each process writes its profile as it exits (a worker's when the primary has stopped it).
  const dir = path.join(root, profDir);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f));
  const summary = [
    `Load: P=${paths.join(' ')} (request counter appended), ${process.env.C ?? 100} connections, ${keys.length} keys, W=${process.env.W ?? '1'}, ${process.env.D ?? 10} s measured after the warm-up: ${r.requests.average} req/s, ${(cpu / r.requests.total).toFixed(3)} CPU ms a request (the server's processes), ${(pgCpu / r.requests.total).toFixed(3)} PostgreSQL CPU ms (every PostgreSQL process); profiles: ${files.map((f) => path.basename(f)).join(', ')}.`,
    '',
    summaryMarkdown(
      summarize(readProfiles(files), root, { fromUs: measuredFromUs, toUs: measuredToUs }),
      Number(process.env.TOP ?? 25),
    ),
  ].join('\n');
  writeFileSync(path.join(dir, 'summary.md'), `${summary}\n`);
  console.log(`\n${summary}\n\nsummary written to ${path.join(profDir, 'summary.md')}`);
}
