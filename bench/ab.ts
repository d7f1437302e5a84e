/*
 * A/B helper for one change: two Sifts (A and B) on one database and one set of fakes, measured in
 * alternating rounds under the same load, so that the machine's drift falls on both sides alike;
 * prints each round and the median throughput, median latency (p50) and CPU per request (user + system, schedstat) of each (its workers' too with A_ENV or B_ENV setting WORKERS),
 * and the CPU per request of every PostgreSQL process (the one database both sides share: a side's
 * statements cost CPU there too, which on a small machine the server and the load generator lack).
 *
 *   A_DIST / B_DIST    the build each side runs (default dist; e.g. a copy of dist from before a change,
 *                      kept inside the project so that it finds node_modules)
 *   A_ARGS / B_ARGS    node flags of each side, after bin/sift-server's (e.g. B_ARGS=--max-semi-space-size=64)
 *   A_ENV / B_ENV      extra environment of each side, as JSON
 *   P=<path up to the query text> (default /api/v1/suggest/?q=ab+; `{n}` is the request counter; several
 *                      paths separated by spaces are taken in turn),
 *   C=<connections> (100), KEYS=<API keys the load rotates over> (1000), D=<seconds a round> (5), ROUNDS (6),
 *   WARM=<seconds of unmeasured load before a side's run when the other side ran last> (2)
 *
 * Not part of `npm run bench`: a developer's tool to decide whether a change helps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { issueApiKey } from '../src/auth/api-keys.js';
import { createUser } from '../src/auth/users.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { startAllFakes } from '../test/fakes/all.js';
import { childPids, cpuMsOf, postgresCpuMs, serverNodeFlags } from './proc.js';
import { rotatingLoad } from './rotating-load.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const fakes = await startAllFakes({ latencyMs: 50 });
const pg = await startEmbeddedPostgres({ dataDir: 'bench/results/ab-data' });
const pool = createPool(pg.url);
await migrate(pool);
const user = await createUser(pool, { username: `ab${Date.now()}` });
const keys: string[] = [];
for (let i = 0; i < Number(process.env.KEYS ?? 1000); i++) keys.push((await issueApiKey(pool, user.id)).key);
await pool.end();

interface Side {
  name: string;
  child: ChildProcess;
  url: string;
  rounds: { rps: number; p50: number; cpuMsPerRequest: number; pgMsPerRequest: number }[];
}

/** A side's CPU time, ms: its server's and, with WORKERS > 1 in its environment, every worker's. */
const sideCpuMs = (side: Side): number =>
  [side.child.pid!, ...childPids(side.child.pid!)].reduce((n, p) => n + cpuMsOf(p), 0);

async function startSide(name: 'A' | 'B', port: number): Promise<Side> {
  const dist = process.env[`${name}_DIST`] ?? 'dist';
  const args = (process.env[`${name}_ARGS`] ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...serverNodeFlags(root), ...args, `${dist}/server.js`], {
    cwd: root,
    env: {
      ...process.env,
      ...fakes.env,
      DATABASE_URL: pg.url,
      WORKERS: '1',
      PORT: String(port),
      HOST: '127.0.0.1',
      PROBE_INTERVAL_SECONDS: '0',
      LOG_LEVEL: 'info',
      API_THROTTLE_BURST: '100000000/min',
      API_THROTTLE_SUSTAINED: '1000000000/day',
      ...JSON.parse(process.env[`${name}_ENV`] ?? '{}'),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      if ((await fetch(`${url}/up`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  return { name, child, url, rounds: [] };
}

// Several paths separated by spaces are taken in turn.
const bases = (process.env.P ?? '/api/v1/suggest/?q=ab+').split(' ').filter(Boolean);
const load = rotatingLoad({
  connections: Number(process.env.C ?? 100),
  path: (i) => {
    const base = bases[i % bases.length]!;
    return base.includes('{n}') ? base.replaceAll('{n}', String(i)) : `${base}${i}`;
  },
  keys,
});

const sides = [await startSide('A', 8351), await startSide('B', 8352)];
for (const side of sides) await load(side.url, 3); // warm-up: JIT, key cache, upstream connections
const rounds = Number(process.env.ROUNDS ?? 6);
const warmSeconds = Number(process.env.WARM ?? 2);
let previous: Side | undefined = sides[1];
for (let round = 0; round < rounds; round++) {
  // A-B, B-A, …: neither side always goes first.
  for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
    // A side that takes over from the other runs slower for a while (caches, the scheduler): an A/A run
    // without this gave B/A 1.09, each round's first side (the one that had just run) ~10% faster.
    if (previous !== side) await load(side.url, warmSeconds);
    previous = side;
    const cpu0 = sideCpuMs(side);
    const pg0 = postgresCpuMs();
    const r = await load(side.url, Number(process.env.D ?? 5));
    const cpu = sideCpuMs(side) - cpu0;
    const pgMs = postgresCpuMs() - pg0;
    side.rounds.push({
      rps: r.requests.average,
      p50: r.latency.p50,
      cpuMsPerRequest: cpu / r.requests.total,
      pgMsPerRequest: pgMs / r.requests.total,
    });
    console.log(
      `round ${round + 1} ${side.name}: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, ${(cpu / r.requests.total).toFixed(4)} CPU ms/req, PostgreSQL ${(pgMs / r.requests.total).toFixed(4)} CPU ms/req, non-2xx ${r.non2xx}`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const [a, b] = sides.map((s) => ({
  rps: median(s.rounds.map((r) => r.rps)),
  p50: median(s.rounds.map((r) => r.p50)),
  cpu: median(s.rounds.map((r) => r.cpuMsPerRequest)),
  pg: median(s.rounds.map((r) => r.pgMsPerRequest)),
}));
console.log(
  `median A: ${a!.rps.toFixed(0)} req/s, p50 ${a!.p50} ms, ${a!.cpu.toFixed(4)} CPU ms/req, PostgreSQL ${a!.pg.toFixed(4)}; B: ${b!.rps.toFixed(0)} req/s, p50 ${b!.p50} ms, ${b!.cpu.toFixed(4)} CPU ms/req, PostgreSQL ${b!.pg.toFixed(4)}; B/A throughput ${(b!.rps / a!.rps).toFixed(3)}, CPU ${(b!.cpu / a!.cpu).toFixed(3)}, PostgreSQL CPU ${(b!.pg / a!.pg).toFixed(3)}`,
);
// Peak resident memory of each side over the whole run (VmHWM), for changes that trade memory for CPU.
const peakRssMb = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) / 1024;
console.log(sides.map((s) => `${s.name} peak RSS ${peakRssMb(s.child.pid!).toFixed(1)} MB`).join('; '));
for (const side of sides) side.child.kill('SIGTERM');
await Promise.all(sides.map((s) => new Promise((r) => s.child.on('exit', r))));
await fakes.close();
await pg.stop();
