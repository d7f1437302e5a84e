/*
 * `npm run bench`: Sift measured against floors built from the same parts, in
 * one run on one machine (DESIGN.md section 8). See bench/README.md.
 *
 * Processes: PostgreSQL (embedded, started by Sift in a temporary DATA_DIR, or
 * DATABASE_URL), the fake engines (bench/fakes-process.ts), Sift
 * (node dist/server.js), the bare JSON floor and the fan-out floor.
 * Load: autocannon from this process.
 *
 * Options (environment): BENCH_DURATION (s, default 8), BENCH_WARMUP (s, 3),
 * BENCH_LATENCY_MS (fake engine latency, 50), DATABASE_URL.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { issueApiKey } from '../src/auth/api-keys.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createPool } from '../src/db/pool.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 50);
const EXTERNAL_DB = process.env.DATABASE_URL ?? '';
const ENGINE_TIMEOUT_MS = 3000;
/** API keys the load rotates through, so every key stays within the default rate limits. */
const KEYS = Number(process.env.BENCH_KEYS ?? 1000);
const CLK_TCK = 100;

const children: ChildProcess[] = [];
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts a process that prints one JSON line when ready. */
async function startJsonProcess<T>(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; info: T }> {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const info = await new Promise<T>((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)) as T);
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
  return { child, info };
}

async function waitForUp(url: string, timeoutMs = 30_000): Promise<number> {
  const start = performance.now();
  for (;;) {
    try {
      const res = await fetch(`${url}/up`);
      if (res.status === 200) return performance.now() - start;
    } catch {
      /* not yet */
    }
    if (performance.now() - start > timeoutMs) throw new Error(`${url}/up did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Sift {
  child: ChildProcess;
  url: string;
  startMs: number;
}

async function startSift(env: NodeJS.ProcessEnv, logFile: string): Promise<Sift> {
  const port = await freePort();
  const out = (await import('node:fs')).openSync(logFile, 'a');
  const t0 = performance.now();
  // The same command line as `npm start` and the Docker image (the script execs node: same pid).
  const child = spawn('sh', ['bin/sift-server'], {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', out, out],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitForUp(url);
  return { child, url, startMs: performance.now() - t0 };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  cpuMsPerRequest?: number;
}

let queryCounter = 0;

async function load(
  url: string,
  pathFor: () => string,
  connections: number,
  headersFor: () => Record<string, string> = () => ({}),
  pid?: number,
): Promise<Load> {
  const run = (duration: number) =>
    autocannon({
      url,
      connections,
      duration,
      requests: [
        {
          method: 'GET',
          setupRequest: (req: autocannon.Request) => ({ ...req, path: pathFor(), headers: { ...req.headers, ...headersFor() } }),
        },
      ],
    });
  await run(WARMUP);
  const before = pid ? cpuTicks(pid) : 0;
  const r = await run(DURATION);
  const after = pid ? cpuTicks(pid) : 0;
  const requests = r.requests.total;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpuMsPerRequest: pid && requests > 0 ? (((after - before) / CLK_TCK) * 1000) / requests : undefined,
  };
}

const uniqueWebPath = () => `/api/v1/web/?q=bench+query+${++queryCounter}`;

function cli(env: NodeJS.ProcessEnv, args: string[], input?: string): string {
  const r = spawnSync(process.execPath, ['dist/cli/main.js', ...args], { cwd: root, env, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sift ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

interface Target {
  name: string;
  value: string;
  target: string;
  met: boolean;
}

async function main() {
  log('building dist/');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error('build failed');

  const work = mkdtempSync(path.join(os.tmpdir(), 'sift-bench-'));
  const logFile = path.join(work, 'sift.log');
  log(`work dir ${work} (Sift log: ${logFile})`);

  log(`starting fake engines (latency ${LATENCY} ms)`);
  const fakes = await startJsonProcess<{ env: Record<string, string>; control: string }>([
    '--import',
    'tsx',
    'bench/fakes-process.ts',
    String(LATENCY),
  ]);

  const baseEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...fakes.info.env,
    LOG_LEVEL: 'info',
    PROBE_INTERVAL_SECONDS: '0',
    STATUS_MONITOR_PROVIDERS: 'engine',
  };

  log('cold start of Sift with an empty database, then a restart');
  const startEnv = { ...baseEnv, DATA_DIR: path.join(work, 'cold'), DATABASE_URL: EXTERNAL_DB };
  let sift = await startSift(startEnv, logFile);
  const coldStartMs = sift.startMs;
  await stop(sift.child);
  sift = await startSift(startEnv, logFile);
  const restartMs = sift.startMs;
  await stop(sift.child);

  log('PostgreSQL for the load runs');
  const pgsql = EXTERNAL_DB ? null : await startEmbeddedPostgres({ dataDir: path.join(work, 'data') });
  const siftEnv = { ...baseEnv, DATA_DIR: path.join(work, 'data'), DATABASE_URL: EXTERNAL_DB || pgsql!.url };
  sift = await startSift(siftEnv, logFile);
  const pid = sift.child.pid!;

  log(`creating a user and an API key through the CLI, and ${KEYS} more keys for the load`);
  cli(siftEnv, ['create-user', 'bench', '--password-stdin'], 'bench-password-1234\n');
  const key = cli(siftEnv, ['create-api-key', 'bench', '--name', 'bench'])
    .split('\n')
    .find((l) => l.startsWith('svc_sk_'));
  if (!key) throw new Error('no key printed by create-api-key');
  const auth = { authorization: `Api-Key ${key}` };
  const pool = createPool(siftEnv.DATABASE_URL!);
  const { rows } = await pool.query<{ id: string }>("SELECT id FROM users WHERE username = 'bench'");
  const userId = Number(rows[0]!.id);
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) keys.push((await issueApiKey(pool, userId, `bench ${i}`)).key);
  await pool.end();
  let keyTurn = 0;
  const rotatingAuth = () => ({ authorization: `Api-Key ${keys[keyTurn++ % keys.length]}` });

  log('starting the floors');
  const floorJson = await startJsonProcess<{ url: string }>(['--import', 'tsx', 'bench/floor-json.ts']);
  const floorFanout = await startJsonProcess<{ url: string }>([
    '--import',
    'tsx',
    'bench/floor-fanout.ts',
    JSON.stringify(fakes.info.env),
  ]);

  // sanity: both answer a web search with merged results
  for (const [name, url, h] of [
    ['sift', sift.url, auth],
    ['floor', floorFanout.info.url, {}],
  ] as const) {
    const res = await fetch(`${url}/api/v1/web/?q=sanity`, { headers: h });
    const body = (await res.json()) as { results?: unknown[] };
    if (res.status !== 200 || !body.results?.length) throw new Error(`${name} web search is not working: ${res.status}`);
  }

  const web: Record<string, { sift: Load; floor: Load }> = {};
  for (const c of [10, 100]) {
    log(`web search, ${c} connections: floor`);
    const floor = await load(floorFanout.info.url, uniqueWebPath, c, undefined, floorFanout.child.pid);
    log(`web search, ${c} connections: sift`);
    const s = await load(sift.url, uniqueWebPath, c, rotatingAuth, pid);
    web[c] = { sift: s, floor };
  }
  const rssMb = peakRssMb(pid);
  const floorRssMb = peakRssMb(floorFanout.child.pid!);

  const health: Record<string, { sift: Load; floor: Load }> = {};
  for (const c of [10, 100]) {
    log(`/status/health, ${c} connections`);
    const floor = await load(floorJson.info.url, () => '/status/health', c, undefined, floorJson.child.pid);
    const s = await load(sift.url, () => '/status/health', c, undefined, pid);
    health[c] = { sift: s, floor };
  }

  log('auth + limits cost: GET /api/v1/ with a valid key vs without a key (401, no database)');
  const withKey = await load(sift.url, () => '/api/v1/', 10, rotatingAuth, pid);
  const withoutKey = await load(sift.url, () => '/api/v1/', 10, undefined, pid);

  log('hung engine (provider_04 never answers)');
  await fetch(`${fakes.info.control}/mode?engine=staan&kind=hang`, { method: 'POST' });
  const hung: { ms: number; others: boolean; unresponsive: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const res = await fetch(`${sift.url}/api/v1/web/?q=hung+engine+${i}`, { headers: auth });
    const body = (await res.json()) as { results: { source: string }[]; unresponsive: { engine: string; reason: string }[] };
    hung.push({
      ms: performance.now() - t0,
      others: res.status === 200 && body.results.length > 0,
      unresponsive: body.unresponsive.map((u) => `${u.engine}:${u.reason}`).join(','),
    });
  }
  await new Promise((r) => setTimeout(r, 1500));
  const hungHealth = (await (await fetch(`${sift.url}/status/health/provider_04`)).json()) as { state: string };
  await fetch(`${fakes.info.control}/mode?engine=staan&kind=normal`, { method: 'POST' });
  const hungWorst = Math.max(...hung.map((h) => h.ms));

  for (const child of [floorJson.child, floorFanout.child, sift.child, fakes.child]) await stop(child);
  await pgsql?.stop();

  // ---- report ----
  const f1 = (n: number) => n.toFixed(1);
  const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
  const targets: Target[] = [];
  for (const c of [10, 100]) {
    const r = ratio(web[c]!.sift.rps, web[c]!.floor.rps);
    targets.push({ name: `web search throughput, ${c} connections`, value: `${r.toFixed(2)}× floor`, target: '≥ 0.8× floor', met: r >= 0.8 });
  }
  const p50Delta = web[10]!.sift.p50 - web[10]!.floor.p50;
  targets.push({ name: 'web search p50, 10 connections', value: p50Delta >= 0 ? `floor + ${f1(p50Delta)} ms` : `floor − ${f1(-p50Delta)} ms`, target: '≤ floor + 5 ms', met: p50Delta <= 5 });
  const hr = ratio(health[100]!.sift.rps, health[100]!.floor.rps);
  targets.push({ name: '/status/health throughput, 100 connections', value: `${hr.toFixed(2)}× bare route`, target: '≥ 0.5×', met: hr >= 0.5 });
  const hungOk = hungWorst <= ENGINE_TIMEOUT_MS + 50 && hung.every((h) => h.others && h.unresponsive.includes('provider_04'));
  targets.push({
    name: 'hung engine',
    value: `${f1(hungWorst)} ms, others present: ${hung.every((h) => h.others)}, recorded ${hungHealth.state}`,
    target: `≤ ${ENGINE_TIMEOUT_MS + 50} ms with the others' results, recorded down`,
    met: hungOk && hungHealth.state === 'down',
  });
  targets.push({
    name: 'peak RSS under web-search load',
    value: `${f1(rssMb)} MB (fan-out floor ${f1(floorRssMb)} MB)`,
    target: '≤ 250 MB',
    met: rssMb <= 250,
  });
  targets.push({
    name: `cold start (${EXTERNAL_DB ? 'DATABASE_URL' : 'embedded, empty'}) to /up 200`,
    value: `${f1(coldStartMs)} ms`,
    target: '≤ 3000 ms',
    met: coldStartMs <= 3000,
  });
  targets.push({ name: 'restart to /up 200', value: `${f1(restartMs)} ms`, target: '≤ 1500 ms', met: restartMs <= 1500 });

  const lines: string[] = [];
  lines.push(`# Sift benchmark — ${new Date().toISOString()}`);
  lines.push('');
  lines.push(`Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; fake engine latency ${LATENCY} ms; ${DURATION} s per run after ${WARMUP} s warm-up; database: ${EXTERNAL_DB ? 'DATABASE_URL' : 'embedded'}.`);
  lines.push('');
  lines.push('| measure | connections | Sift req/s | floor req/s | ratio | Sift p50 / p99 ms | floor p50 / p99 ms | Sift / floor CPU ms/req | non-2xx / errors |');
  lines.push('|---|---|---|---|---|---|---|---|---|');
  for (const [name, table] of [
    ['web search', web],
    ['/status/health', health],
  ] as const) {
    for (const c of [10, 100]) {
      const { sift: s, floor } = table[c]!;
      lines.push(
        `| ${name} | ${c} | ${f1(s.rps)} | ${f1(floor.rps)} | ${ratio(s.rps, floor.rps).toFixed(2)} | ${s.p50} / ${s.p99} | ${floor.p50} / ${floor.p99} | ${s.cpuMsPerRequest?.toFixed(3) ?? '-'} / ${floor.cpuMsPerRequest?.toFixed(3) ?? '-'} | ${s.non2xx + floor.non2xx} / ${s.errors + floor.errors} |`,
      );
    }
  }
  lines.push('');
  lines.push(
    `Auth + limits: GET /api/v1/ with a valid key ${f1(withKey.rps)} req/s, p50 ${withKey.p50} ms, ${withKey.cpuMsPerRequest?.toFixed(3)} CPU ms/req; without a key (401) ${f1(withoutKey.rps)} req/s, p50 ${withoutKey.p50} ms, ${withoutKey.cpuMsPerRequest?.toFixed(3)} CPU ms/req → cost ≈ ${f1(withKey.p50 - withoutKey.p50)} ms p50, ${((withKey.cpuMsPerRequest ?? 0) - (withoutKey.cpuMsPerRequest ?? 0)).toFixed(3)} CPU ms per request (Sift process only; the database's own CPU is not counted).`,
  );
  lines.push('');
  lines.push(`Hung engine: ${hung.map((h) => `${f1(h.ms)} ms (${h.unresponsive})`).join('; ')}; provider_04 state afterwards: ${hungHealth.state}.`);
  lines.push('');
  lines.push('| target | measured | wanted | |');
  lines.push('|---|---|---|---|');
  for (const t of targets) lines.push(`| ${t.name} | ${t.value} | ${t.target} | ${t.met ? 'met' : 'NOT MET'} |`);
  process.stdout.write(`${lines.join('\n')}\n`);

  mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    path.join(root, 'bench', 'results', 'latest.json'),
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
        settings: { durationS: DURATION, warmupS: WARMUP, latencyMs: LATENCY, keys: KEYS, database: EXTERNAL_DB ? 'external' : 'embedded' },
        web,
        health,
        authLimits: { withKey, withoutKey },
        hungEngine: { runs: hung, state: hungHealth.state, timeoutMs: ENGINE_TIMEOUT_MS },
        peakRssMb: rssMb,
        floorPeakRssMb: floorRssMb,
        coldStartMs,
        restartMs,
        targets,
      },
      null,
      2,
    )}\n`,
  );
  rmSync(work, { recursive: true, force: true });
}

try {
  await main();
} catch (err) {
  log(`failed: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
}
