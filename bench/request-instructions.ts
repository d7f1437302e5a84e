/*
 * A whole API request's cost in instructions, which do not move with the machine's load as times
 * do: the server (a build, DIST, default dist) runs under callgrind, uninstrumented through its
 * start and a warm-up load; then the counters are switched on and zeroed (callgrind_control), N
 * requests run, and the counters are dumped. Everything the server process does for them is
 * counted: HTTP parsing, the hooks (authentication, limits, usage), the route, the answer, the log
 * line, the response's write, GC, V8's compiler threads. PostgreSQL and the load generator run
 * outside valgrind and are not counted; nor is the kernel's side of a system call.
 *
 *   npm run build && npx tsx bench/request-instructions.ts           (about 80 s)
 *   FLOOR=json npx tsx bench/request-instructions.ts                   the bare JSON route, for comparison
 *   FLOOR=fanout P='/api/v1/suggest/?q={n}' npx tsx bench/request-instructions.ts
 *                                                                      the fan-out floor on the same path
 *
 * P=<paths, `{n}` the request counter, several separated by spaces, taken in turn> (default: the
 * six instant queries of `npm run bench`), N=<requests measured> (5000), WARM=<warm-up requests>
 * (20000), C=<connections> (100), KEYS=<API keys the load rotates over> (12), LL=<LOG_LEVEL> (info),
 * SIFT_NODE_ARGS=<node flags of the server> (--perf-basic-prof: /tmp/perf-<pid>.map names the
 * compiled JavaScript that callgrind_annotate shows as bare addresses), CG_LOG=1 (the server's log
 * to standard output), CG_TOP=<functions> (callgrind_annotate's top list after the figure),
 * WARM_P=<paths, as P> and WARM_N=<requests> (10000): an uncounted load on those paths before the
 * warm-up, e.g. every endpoint, as a server that has answered them all is (every upstream points at
 * its fake from test/fakes, answering after 5 ms, so the fan-out endpoints answer too).
 *
 * Under valgrind the server answers some 150 requests a second: KEYS=12 gives each key about the
 * rate it has in `npm run bench` (1000 keys at 10,000–15,000 requests a second), so that the rate
 * limiter's leases admit most requests without a statement, as there. The total moves by 3–5 %
 * between runs of one build (mostly V8's optimizing compiler, which is still at work after the
 * warm-up), so compare two builds by the functions a change touches (callgrind_annotate on the
 * dumps) as well as by the total. Measured on 2026-11-28 (main at 4860858): Sift 333,000–349,000
 * instructions a request, the bare JSON route 87,000.
 *
 * A server that has answered every endpoint spends more on each request than one that has only
 * answered the measured one: the code the routes share (Fastify's, the hooks, the search route's
 * handler) has seen more object shapes and functions, and V8 compiles it for all of them. Counted
 * on 2026-11-30 (the six instant queries, main at 0610035): 202,789 instructions a request after
 * the default warm-up on them alone (about 6,800 of them in V8's compiler); with WARM_P over every
 * endpoint and WARM=50000, 290,402 (46,900 in the compiler) and 322,794 (41,400 in the compiler, and
 * some 35,000 in V8's runtime for Node's nextTick tick objects, which that run took).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { issueApiKey } from '../src/auth/api-keys.js';
import { createUser } from '../src/auth/users.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { INSTANT_QUERIES } from './instant-queries.js';
import { serverNodeFlags } from './proc.js';
import { startAllFakes } from '../test/fakes/all.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = process.env.DIST ?? 'dist';
const N = Number(process.env.N ?? 5000);
const WARM = Number(process.env.WARM ?? 20_000);
const connections = Number(process.env.C ?? 100);
const port = 8300 + Math.floor(Math.random() * 400);
const paths = (process.env.P ?? '').split(' ').filter(Boolean);
const warmPaths = (process.env.WARM_P ?? '').split(' ').filter(Boolean);
/** The i-th of a list of paths, taken in turn, `{n}` replaced by i. */
const nthOf = (list: string[], i: number): string => list[i % list.length]!.replaceAll('{n}', String(i));
/** The path of the i-th request: P's, or the bench's instant queries in turn. */
const pathFor = (i: number): string =>
  paths.length > 0
    ? nthOf(paths, i)
    : `/api/v1/instant/?q=${encodeURIComponent(INSTANT_QUERIES[i % INSTANT_QUERIES.length]!(i))}`;

const fakes = await startAllFakes({ latencyMs: 5 });
const work = mkdtempSync(path.join(tmpdir(), 'sift-cg-'));
const pg = await startEmbeddedPostgres({ dataDir: path.join(work, 'pg') });
const pool = createPool(pg.url);
await migrate(pool);
const user = await createUser(pool, { username: `cg${Date.now()}` });
const keys: string[] = [];
for (let i = 0; i < Number(process.env.KEYS ?? 12); i++) keys.push((await issueApiKey(pool, user.id)).key);
await pool.end();

const out = path.join(work, 'callgrind.out');
// callgrind_control finds the server through files named after USER and HOST (the server's HOST, its
// listening address, is valgrind's too): both sides must see the same ones.
const VGDB_ENV = { USER: process.env.USER || 'sift', LOGNAME: process.env.LOGNAME || 'sift', HOST: '127.0.0.1' };
// FLOOR=json: the bare JSON route (bench/floor-json.ts, the instant answers' floor in `npm run bench`) instead of
// Sift; FLOOR=fanout: the fan-out floor (bench/floor-fanout.ts, Sift's feature modules without gate or database).
const floor = process.env.FLOOR === 'json' || process.env.FLOOR === 'fanout';
const floorArgs =
  process.env.FLOOR === 'fanout' ? ['bench/floor-fanout.ts', JSON.stringify(fakes.env)] : ['bench/floor-json.ts'];
const nodeArgs = [
  ...(process.env.SIFT_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ...(floor ? ['--import', 'tsx', ...floorArgs] : [...serverNodeFlags(root), `${dist}/server.js`]),
];
const server = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    // Not instrumented until the measured load (callgrind_control --instr=on): start-up and the
    // warm-up run several times faster, and the database connection's timeout is not reached.
    '--instr-atstart=no',
    '--vgdb=yes',
    `--callgrind-out-file=${out}`,
    process.execPath,
    ...nodeArgs,
  ],
  {
    cwd: root,
    env: {
      ...process.env,
      ...VGDB_ENV,
      ...fakes.env,
      DATABASE_URL: pg.url,
      WORKERS: '1',
      PORT: String(port),
      HOST: '127.0.0.1',
      PROBE_INTERVAL_SECONDS: '0',
      LOG_LEVEL: process.env.LL ?? 'info',
      API_THROTTLE_BURST: '100000000/min',
      API_THROTTLE_SUSTAINED: '1000000000/day',
    },
    stdio: ['ignore', floor ? 'pipe' : process.env.CG_LOG ? 'inherit' : 'ignore', 'pipe'],
  },
);
let stderr = '';
/** Stops the server and the database, then fails with `message`: nothing is left running. */
async function fail(message: string): Promise<never> {
  server.kill('SIGKILL');
  await pg.stop();
  await fakes.close();
  rmSync(path.join(work, 'pg'), { recursive: true, force: true });
  throw new Error(message);
}
server.stderr!.on('data', (chunk: Buffer) => {
  stderr += chunk.toString();
});
/** The floor's address: the first line it prints. */
const floorUrl = floor
  ? new Promise<string>((resolve) => {
      let text = '';
      server.stdout!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const line = text.indexOf('\n');
        if (line >= 0) resolve((JSON.parse(text.slice(0, line)) as { url: string }).url);
      });
    })
  : null;
const base = floorUrl ? await floorUrl : `http://127.0.0.1:${port}`;
const started = Date.now();
for (;;) {
  try {
    // A floor prints its address once it listens: any answer will do (the fan-out floor has no health route).
    const answer = await fetch(floor ? base : `${base}/up`);
    if (floor || answer.ok) break;
  } catch {}
  if (server.exitCode !== null || Date.now() - started > 600_000) await fail(`no server:\n${stderr}`);
  await new Promise((r) => setTimeout(r, 500));
}

let n = 0;
let k = 0;
/** Set while the load runs on WARM_P's paths. */
let warming = false;
const load = (amount: number) =>
  autocannon({
    url: base,
    connections,
    amount,
    timeout: 120,
    requests: [
      {
        method: 'GET',
        setupRequest: (req: autocannon.Request) => ({
          ...req,
          path: warming ? nthOf(warmPaths, n++) : pathFor(n++),
          headers: { authorization: `Api-Key ${keys[k++ % keys.length]}` },
        }),
      },
    ],
  });

const control = async (...args: string[]) => {
  const r = spawnSync('callgrind_control', [...args, String(server.pid)], {
    encoding: 'utf8',
    env: { ...process.env, ...VGDB_ENV },
  });
  if (r.status !== 0) await fail(`callgrind_control ${args.join(' ')}: ${r.stderr}${r.stdout}`);
};
let warmOthers = { non2xx: 0, errors: 0 };
if (warmPaths.length > 0) {
  warming = true;
  warmOthers = await load(Number(process.env.WARM_N ?? 10_000));
  warming = false;
}
const warm = await load(WARM);
await control('--instr=on');
await control('--zero');
const measured = await load(N);
await control('--dump=measured');
server.kill('SIGTERM');
await new Promise((r) => server.on('exit', r));
await pg.stop();
rmSync(path.join(work, 'pg'), { recursive: true, force: true });
await fakes.close();

// The dump made by --dump is `<out>.<n>` (the first: .1); its `totals:` line counts what ran since --zero.
const dumpFile = `${out}.1`;
const totals = Number(/^totals:\s+(\d+)/m.exec(readFileSync(dumpFile, 'utf8'))?.[1]);
const ok = measured.requests.total - measured.non2xx - measured.errors;
console.log(
  JSON.stringify({
    dist,
    requests: measured.requests.total,
    non2xx: measured.non2xx + warm.non2xx + warmOthers.non2xx,
    errors: measured.errors + warm.errors + warmOthers.errors,
    instructions: totals,
    instructionsPerRequest: Math.round(totals / ok),
    dump: dumpFile,
  }),
);
const top = Number(process.env.CG_TOP ?? 0);
if (top > 0) {
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=no', dumpFile], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  console.log(
    annotated.stdout
      .split('\n')
      .slice(0, top + 25)
      .join('\n'),
  );
}
