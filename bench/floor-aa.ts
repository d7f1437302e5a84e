/*
 * An A/A check of the fan-out floor: two identical floors (bench/floor-fanout.ts) on one set of fakes
 * (bench/fakes-process.ts), measured in alternating rounds (A, B, B, A) under the same load. Both run
 * the same code with the same flags, so every departure of B/A from 1 is noise: the machine's, and
 * each process's own. Not part of `npm run bench`: it tells how far one floor run can be trusted.
 *
 *   npx tsx bench/floor-aa.ts                 V8's default heap flags
 *   FLAGS=sift npx tsx bench/floor-aa.ts      bin/sift-server's flags, as `npm run bench` gives the floors
 *   FLAGS='--max-semi-space-size=16' …        any node flags
 *
 * P=<path, `{n}` the request counter> (default web search), C=<connections> (100), D=<seconds a
 * round> (2), TRIALS=<A,B,B,A sequences on the same two processes> (2), PAIRS=<pairs of new
 * processes, one after the other> (3). Prints B/A throughput and CPU per request of every trial.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuMsOf, serverNodeFlags } from './proc.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const P = process.env.P ?? '/api/v1/web/?q=aa+query+{n}';
const connections = Number(process.env.C ?? 100);
const D = Number(process.env.D ?? 2);
const TRIALS = Number(process.env.TRIALS ?? 2);
const PAIRS = Number(process.env.PAIRS ?? 3);
const flags =
  process.env.FLAGS === 'sift' ? serverNodeFlags(root) : (process.env.FLAGS ?? '').split(' ').filter(Boolean);

interface Proc {
  child: ChildProcess;
  url: string;
}

/** A node process that prints one JSON line when ready. */
function start(args: string[]): Promise<{ child: ChildProcess; info: Record<string, unknown> }> {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve({ child, info: JSON.parse(buf.slice(0, nl)) as Record<string, unknown> });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

let n = 0;
/** One round: requests served, seconds, CPU ms of the floor. */
async function round(p: Proc, seconds: number) {
  const cpu = cpuMsOf(p.child.pid!);
  const r = await autocannon({
    url: p.url,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: P.replaceAll('{n}', String(n++)) }) }],
  });
  return { requests: r.requests.total, seconds: r.duration, cpuMs: cpuMsOf(p.child.pid!) - cpu };
}
type Round = Awaited<ReturnType<typeof round>>;
const rps = (l: Round[]) => l.reduce((s, x) => s + x.requests, 0) / l.reduce((s, x) => s + x.seconds, 0);
const cpuPerRequest = (l: Round[]) => l.reduce((s, x) => s + x.cpuMs, 0) / l.reduce((s, x) => s + x.requests, 0);

const fakes = await start(['--import', 'tsx', 'bench/fakes-process.ts', '50']);
const floorArgs = [...flags, '--import', 'tsx', 'bench/floor-fanout.ts', JSON.stringify(fakes.info.env)];
console.log(`floor flags: ${flags.join(' ') || '(V8 defaults)'}; ${P} at ${connections} connections`);
const cpuRatios: number[] = [];
for (let pair = 1; pair <= PAIRS; pair++) {
  const [a, b] = await Promise.all([start(floorArgs), start(floorArgs)]);
  const A: Proc = { child: a.child, url: String(a.info.url) };
  const B: Proc = { child: b.child, url: String(b.info.url) };
  await round(A, 3);
  await round(B, 3);
  for (let trial = 1; trial <= TRIALS; trial++) {
    const ra: Round[] = [];
    const rb: Round[] = [];
    ra.push(await round(A, D));
    rb.push(await round(B, D));
    rb.push(await round(B, D));
    ra.push(await round(A, D));
    const cpu = cpuPerRequest(rb) / cpuPerRequest(ra);
    cpuRatios.push(cpu);
    console.log(
      `pair ${pair} trial ${trial}: B/A throughput ${(rps(rb) / rps(ra)).toFixed(3)}, CPU per request ${cpu.toFixed(3)} (A ${rps(ra).toFixed(0)} req/s, ${cpuPerRequest(ra).toFixed(3)} ms)`,
    );
  }
  for (const p of [A, B]) p.child.kill('SIGTERM');
}
fakes.child.kill('SIGTERM');
console.log(
  `B/A CPU per request over ${cpuRatios.length} trials: ${Math.min(...cpuRatios).toFixed(3)} to ${Math.max(...cpuRatios).toFixed(3)}`,
);
