/*
 * `npm run bench`: Sift measured against floors built from the same parts, in
 * one run on one machine (the guardrails of bench/README.md). See bench/README.md.
 *
 * Processes: PostgreSQL (embedded, started by Sift in a temporary DATA_DIR, or
 * DATABASE_URL), every upstream's fake (bench/fakes-process.ts), Sift
 * (node dist/server.js), the bare JSON floor and the fan-out floor.
 * Load: autocannon from this process.
 *
 * Sections (BENCH_ONLY=web,images,… runs only those; start always runs). Each reports its own
 * A/A spread (the floor against itself, or two runs of the same side), and a target missed by no
 * more than it reads "within noise", not "NOT MET".
 *   one per search endpoint: web, images, news, videos, suggest, maps,
 *   translate, cards (each against the fan-out floor) and instant (against
 *   the bare JSON route), at 10 and 100 connections;
 *   mix (every endpoint in realistic proportions), health, gate (an admitted GET /api/v1/
 *   against the bare route: the gate's own CPU, Sift's and PostgreSQL's), hung, limits,
 *   metrics (web search on a new Sift with METRICS_ENABLED=true against a new one without),
 *   workers (web search on WORKERS=<cores> processes against one process),
 *   side (the side by side with SearXNG's load: web search at WORKERS=auto and one process,
 *   Sift's and PostgreSQL's CPU per search beside the previous results file's),
 *   quota (bench/quota.ts: upstream calls of a duplicate-heavy mix on one process, WORKERS=2
 *   and two instances; Brave's free plan under 20 clients);
 *   contents (bench/contents.ts: page extraction scored on scrapinghub's article-extraction-benchmark,
 *   CPU per page and the event loop under extraction load; skipped without CONTENTS_BENCH_DATASET).
 *
 * Options (environment): BENCH_ENDPOINT_DURATION (s, default 6: Sift's
 * measured run, and the floor's, in two halves around Sift's) and
 * BENCH_ENDPOINT_WARMUP (s, 2) for the endpoint runs that a target reads (100
 * connections, and web search at 10); BENCH_UNTARGETED_DURATION (s, 2) and
 * BENCH_UNTARGETED_WARMUP (s, 1) for the other 10-connection runs;
 * BENCH_METRICS_ROUNDS (5) rounds of BENCH_ROUND_WARMUP (s, 2) and
 * BENCH_METRICS_ROUND_DURATION (s, 5), both Sifts under load at once, for the
 * metrics section; BENCH_WORKERS_PAIRS (4) pairs of rounds of
 * BENCH_ROUND_WARMUP and BENCH_ROUND_DURATION (s, 3) for the workers section;
 * BENCH_DURATION (s,
 * 6) and BENCH_WARMUP (s, 2) for health, gate and limits; BENCH_MIX_DURATION
 * (s, 15) and BENCH_MIX_CONNECTIONS (100) for the mix; BENCH_WARMUP_ALL (s, 5:
 * both sides over every endpoint before the first section); BENCH_LATENCY_MS
 * (fake upstream latency, 50); BENCH_KEYS (1000); DATABASE_URL.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { issueApiKey } from '../src/auth/api-keys.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createPool } from '../src/db/pool.js';
import { INSTANT_QUERIES } from './instant-queries.js';
import {
  busyShare,
  childPids,
  cpuMsOf,
  machineTicks,
  peakRssMb,
  postgresCpuMs,
  postgresServerCpuMs,
  rssMb,
  serverNodeFlags,
} from './proc.js';
import { previousSideFigures, type SideFigures, writeRunFigures } from './results-file.js';

const t0 = performance.now();
const startedAt = new Date();
const loadAtStart = os.loadavg();
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DURATION = num('BENCH_DURATION', 6);
const WARMUP = num('BENCH_WARMUP', 2);
const ENDPOINT_DURATION = num('BENCH_ENDPOINT_DURATION', 6);
const ENDPOINT_WARMUP = num('BENCH_ENDPOINT_WARMUP', 2);
/**
 * The endpoint runs that no target reads (10 connections, but for web search): shorter, so that
 * the runs the targets read get the time. Both sides are bound by the upstreams' latency there.
 */
const UNTARGETED_DURATION = num('BENCH_UNTARGETED_DURATION', 2);
const UNTARGETED_WARMUP = num('BENCH_UNTARGETED_WARMUP', 1);
/**
 * Rounds of the metrics and workers sections: a warm-up, then a measured run. The warm-up reaches
 * every one of the 1,000 keys (about 700 web searches a second), so that a round after the side was
 * idle does not go to the database for their leases: with 1 s, a side's first round after the other
 * side's warm-up took 0.31 PostgreSQL CPU ms a search against 0.03-0.12 in its later rounds.
 */
const ROUND_WARMUP = num('BENCH_ROUND_WARMUP', 2);
const ROUND_DURATION = num('BENCH_ROUND_DURATION', 3);
/** The measured part of a metrics round, both sides at once. */
const METRICS_ROUND_DURATION = num('BENCH_METRICS_ROUND_DURATION', 5);
/** Rounds of the metrics section, each side loaded at the same time as the other. */
const METRICS_ROUNDS = num('BENCH_METRICS_ROUNDS', 5);
/** Pairs of rounds in the workers section. */
const WORKERS_PAIRS = num('BENCH_WORKERS_PAIRS', 4);
/** Pairs of rounds (WORKERS=auto, one process) in the side section, and the measured part of each, s. */
const SIDE_PAIRS = num('BENCH_SIDE_PAIRS', 3);
const SIDE_DURATION = num('BENCH_SIDE_DURATION', 5);
const MIX_DURATION = num('BENCH_MIX_DURATION', 15);
const WARMUP_ALL = num('BENCH_WARMUP_ALL', 5);
const MIX_CONNECTIONS = num('BENCH_MIX_CONNECTIONS', 100);
const LATENCY = num('BENCH_LATENCY_MS', 50);
const EXTERNAL_DB = process.env.DATABASE_URL ?? '';
const ENGINE_TIMEOUT_MS = 3000;
/** API keys the load rotates through (one user), as many clients would. */
const KEYS = num('BENCH_KEYS', 1000);
/** Limits high enough never to refuse: they are evaluated on every request, but what is measured is the cost of deciding. */
const NEVER_REFUSING_LIMITS = { API_THROTTLE_BURST: '100000000/min', API_THROTTLE_SUSTAINED: '1000000000/day' };

const children: ChildProcess[] = [];
/** The embedded server's postmaster: its CPU and its backends' are PostgreSQL's figure (other servers on the machine are not). */
let postmasterPid = 0;
/** With DATABASE_URL, every PostgreSQL process on the machine. */
const pgCpuMs = () => (postmasterPid ? postgresServerCpuMs(postmasterPid) : postgresCpuMs());
const log = (msg: string) => process.stderr.write(`[bench ${f1((performance.now() - t0) / 1000)} s] ${msg}\n`);

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
async function startJsonProcess<T>(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; info: T }> {
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
  const out = openSync(logFile, 'a');
  const started = performance.now();
  // The same command line as `npm start` and the Docker image (the script execs node: same pid).
  const child = spawn('sh', ['bin/sift-server'], {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', out, out],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitForUp(url);
  return { child, url, startMs: performance.now() - started };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  cpuMsPerRequest?: number;
  /** The share of the whole machine's CPU (every core, every process) busy during the measured run (load() only). */
  machineBusy?: number;
  /** CPU of all PostgreSQL processes per request, ms (when measured). */
  pgCpuMsPerRequest?: number;
  /** The answers that were not 2xx, by status (load() only). */
  non2xxByStatus?: Record<string, number>;
}

interface LoadOptions {
  headers?: () => Record<string, string>;
  /** The process whose CPU is measured. */
  pid?: number | undefined;
  /** Instead of `pid`: the CPU time of several processes (a cluster's primary and workers), ms. */
  cpuMs?: () => number;
  /** PostgreSQL's CPU time, ms (default: the whole server's, pgCpuMs). */
  pgCpuMs?: () => number;
  duration?: number;
  warmup?: number;
}

/** GET requests on `pathFor()`'s next path, with `headersFor()`'s headers. */
function getRequests(pathFor: () => string, headersFor: () => Record<string, string> = () => ({})) {
  return [
    {
      method: 'GET' as const,
      setupRequest: (req: autocannon.Request) => ({
        ...req,
        path: pathFor(),
        headers: { ...req.headers, ...headersFor() },
      }),
    },
  ];
}

/** A warm-up run, then a measured run; CPU of `pid` and of PostgreSQL over the measured run. */
async function load(url: string, pathFor: () => string, connections: number, o: LoadOptions = {}): Promise<Load> {
  const run = (duration: number) =>
    autocannon({ url, connections, duration, requests: getRequests(pathFor, o.headers) });
  const warmup = o.warmup ?? WARMUP;
  if (warmup > 0) await run(warmup);
  const pid = o.pid;
  const cpuMs = o.cpuMs ?? (pid ? () => cpuMsOf(pid) : undefined);
  const pgMs = o.pgCpuMs ?? pgCpuMs;
  const before = cpuMs?.() ?? 0;
  const pgBefore = pgMs();
  const machineBefore = machineTicks();
  const r = await run(o.duration ?? DURATION);
  const machineAfter = machineTicks();
  const after = cpuMs?.() ?? 0;
  const pgAfter = pgMs();
  // A PostgreSQL backend that ended during the run takes its CPU with it: no figure then.
  return {
    ...loadOf(r, cpuMs ? after - before : undefined, pgAfter >= pgBefore ? pgAfter - pgBefore : undefined),
    machineBusy: busyShare(machineBefore, machineAfter),
  };
}

/** A run's figures; CPU per request (the server's, PostgreSQL's) from the CPU ms the run took, when measured. */
function loadOf(r: autocannon.Result, cpuMs: number | undefined, pgCpuMs?: number): Load {
  const requests = r.requests.total;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpuMsPerRequest: cpuMs !== undefined && requests > 0 ? cpuMs / requests : undefined,
    pgCpuMsPerRequest: pgCpuMs !== undefined && requests > 0 ? pgCpuMs / requests : undefined,
    non2xxByStatus: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {})
        .filter(([status]) => !status.startsWith('2'))
        .map(([status, s]) => [status, s.count ?? 0]),
    ),
  };
}

/** A server under load: its URL, the process whose CPU is its figure, and the headers of its requests. */
interface Side {
  url: string;
  pid: number | undefined;
  headers?: () => Record<string, string>;
  /** PostgreSQL's CPU time while this side runs, ms (default: the whole server's, pgCpuMs). */
  pgCpuMs?: () => number;
}

/** Sift against its floor: each side's figures, and the floor's two halves apart (its A/A). */
interface Pair {
  floor: Load;
  sift: Load;
  /** The floor's first and second half, each on its own: the same server measured twice. */
  floorHalves: [Load, Load];
}

/**
 * Sift against its floor, measured floor, Sift, floor: the floor's figures are those of its two
 * halves together, which surround Sift's run. These machines' speed moves within seconds (by a
 * third within minutes on some), and a drift then weighs on both sides alike instead of on the
 * side measured second. Sift's own run is one stretch (warm-up, then measured) as under a steady
 * load. Latency percentiles are those of the runs' histograms merged; CPU per request
 * is the runs' CPU over their requests. The floor's two halves, each on its own, are the
 * section's A/A: the same server measured twice, minutes apart at most.
 */
async function loadPair(
  sides: { floor: Side; sift: Side },
  pathFor: () => string,
  connections: number,
  o: { duration: number; warmup: number },
): Promise<Pair> {
  const run = (side: Side, duration: number) =>
    autocannon({
      url: side.url,
      connections,
      duration,
      // The raw result (histograms encoded), to merge runs with autocannon.aggregateResult.
      skipAggregateResult: true,
      requests: getRequests(pathFor, side.headers),
    }) as unknown as Promise<RawRun>;
  const measured: { side: Side; raw: RawRun; cpuMs: number; pgCpuMs: number | undefined }[] = [];
  const measure = async (side: Side, duration: number) => {
    const pgMs = side.pgCpuMs ?? pgCpuMs;
    const before = side.pid ? cpuMsOf(side.pid) : 0;
    const pgBefore = pgMs();
    const raw = await run(side, duration);
    const cpuMs = side.pid ? cpuMsOf(side.pid) - before : 0;
    const pgAfter = pgMs();
    // A PostgreSQL backend that ended during a run takes its CPU with it: no figure then.
    measured.push({ side, raw, cpuMs, pgCpuMs: pgAfter >= pgBefore ? pgAfter - pgBefore : undefined });
  };
  if (o.warmup > 0) await run(sides.floor, o.warmup);
  await measure(sides.floor, o.duration / 2);
  if (o.warmup > 0) await run(sides.sift, o.warmup);
  await measure(sides.sift, o.duration);
  await measure(sides.floor, o.duration / 2);
  const figuresOf = (side: Side, runs: typeof measured): Load => {
    const raw = runs.map((m) => m.raw);
    const merged = aggregateResult(raw, { url: side.url, connections });
    const requests = raw.reduce((n, r) => n + r.totalCompletedRequests, 0);
    const seconds = raw.reduce((n, r) => n + r.duration, 0);
    const cpuMs = runs.reduce((n, m) => n + m.cpuMs, 0);
    const pgComplete = runs.every((m) => m.pgCpuMs !== undefined);
    const pg = runs.reduce((n, m) => n + (m.pgCpuMs ?? 0), 0);
    return {
      rps: seconds > 0 ? requests / seconds : 0,
      p50: merged.latency.p50,
      p99: merged.latency.p99,
      requests,
      non2xx: raw.reduce((n, r) => n + r.non2xx, 0),
      errors: raw.reduce((n, r) => n + r.errors + r.timeouts, 0),
      cpuMsPerRequest: side.pid && requests > 0 ? cpuMs / requests : undefined,
      pgCpuMsPerRequest: requests > 0 && pgComplete ? pg / requests : undefined,
    };
  };
  const floorRuns = measured.filter((m) => m.side === sides.floor);
  return {
    floor: figuresOf(sides.floor, floorRuns),
    sift: figuresOf(
      sides.sift,
      measured.filter((m) => m.side === sides.sift),
    ),
    floorHalves: [figuresOf(sides.floor, floorRuns.slice(0, 1)), figuresOf(sides.floor, floorRuns.slice(1))],
  };
}

/** autocannon's merge of raw runs (exported by autocannon, not in its type definitions). */
const aggregateResult = (autocannon as unknown as { aggregateResult(raw: RawRun[], opts: object): autocannon.Result })
  .aggregateResult;

/** What autocannon gives for a run with skipAggregateResult (the fields used here). */
interface RawRun {
  totalCompletedRequests: number;
  /** Seconds. */
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/**
 * Two servers under the same load at the same time, each with its own `connections`: a warm-up,
 * then a measured run. Each round's ratio (B's throughput over A's) is taken on one moment of the
 * machine, so its drift (±35 % on fixed work within a minute on these VMs) weighs on both alike;
 * both servers' main threads want a core, and the kernel shares the cores between them evenly, so
 * the cheaper one per request serves more. PostgreSQL's CPU is not split between them (no figure).
 */
async function loadTogether(
  sides: { a: Side; b: Side },
  pathFor: () => string,
  connections: number,
  o: { duration: number; warmup: number },
): Promise<{ a: Load; b: Load }> {
  const run = (side: Side, duration: number) =>
    autocannon({ url: side.url, connections, duration, requests: getRequests(pathFor, side.headers) });
  if (o.warmup > 0) await Promise.all([run(sides.a, o.warmup), run(sides.b, o.warmup)]);
  const cpu = (side: Side) => (side.pid ? cpuMsOf(side.pid) : 0);
  const before = [cpu(sides.a), cpu(sides.b)];
  const [ra, rb] = await Promise.all([run(sides.a, o.duration), run(sides.b, o.duration)]);
  const after = [cpu(sides.a), cpu(sides.b)];
  return {
    a: loadOf(ra!, sides.a.pid ? after[0]! - before[0]! : undefined),
    b: loadOf(rb!, sides.b.pid ? after[1]! - before[1]! : undefined),
  };
}

/** The middle value (the mean of the middle two for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Two servers compared in `pairs` pairs of rounds, A then B, then B then A, and so on, so that
 * neither always runs first: each pair's ratio (B's throughput over A's) compares two runs a few
 * seconds apart, and the median of the pairs' ratios leaves out the pairs that a drift of the
 * machine or a pause of one side (another process, the host) put off. The median of each side's
 * rounds, which this replaced, compared rounds that could be a minute apart.
 */
async function alternatingPairs(
  pairs: number,
  measureA: () => Promise<Load>,
  measureB: () => Promise<Load>,
): Promise<{ a: Load[]; b: Load[]; ratios: number[] }> {
  const a: Load[] = [];
  const b: Load[] = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      a.push(await measureA());
      b.push(await measureB());
    } else {
      b.push(await measureB());
      a.push(await measureA());
    }
  }
  return { a, b, ratios: a.map((x, i) => ratio(b[i]!.rps, x.rps)) };
}

// ---- the requests: a distinct query on every request, so no cache answers for Sift ----

let queryCounter = 0;
const enc = encodeURIComponent;
const pick = <T>(list: readonly T[], n: number): T => list[n % list.length]!;

const WEB_QUERIES = ['bench query', 'rust borrow checker', 'sourdough starter', 'best hiking boots', 'linux kernel'];
const IMAGE_QUERIES = ['mountain lake', 'red fox', 'aurora borealis', 'city skyline at night', 'sunflower field'];
const NEWS_QUERIES = ['election results', 'climate summit', 'stock market', 'champions league', 'space launch'];
const VIDEO_QUERIES = ['guitar lesson', 'bread baking', 'chess opening', 'drone footage', 'yoga for beginners'];
const SUGGEST_PREFIXES = ['how to ma', 'best lapt', 'weather tom', 'python li', 'cheap flig'];
const TRANSLATE_TEXTS = ['hello world', 'good morning', 'where is the station', 'thank you very much'];
const TRANSLATE_TARGETS = ['de', 'fr', 'es'];
/**
 * Card subjects the fakes know (test/cards/fixtures.ts), a number appended so
 * that every query is new: a series and a show (TheTVDB), a landmark and a
 * restaurant search (Tripadvisor), two programming questions (Stack
 * Exchange), a city (the map lookup) and a plain article (Wikipedia only).
 * Each also asks the four web engines (the result sites are signals).
 */
const CARD_QUERIES = [
  'breaking bad',
  'eiffel tower',
  'python list comprehension',
  'the wire',
  'restaurants in lyon',
  'docker volume permissions',
  'berlin',
  'jupiter',
];
/** Reverse geocoding (a map click) at a new point within 0.4° of Berlin or Paris, which the fake Nominatim resolves. */
const MAP_CENTRES = [
  [52.52, 13.405],
  [48.8566, 2.3522],
] as const;

function mapsPath(n: number): string {
  const [lat, lon] = pick(MAP_CENTRES, n);
  const i = Math.floor(n / 2);
  const dLat = (i % 800) / 1000 - 0.4;
  const dLon = (Math.floor(i / 800) % 800) / 1000 - 0.4;
  return `/api/v1/maps/?lat=${(lat + dLat).toFixed(6)}&lon=${(lon + dLon).toFixed(6)}`;
}

type Json = Record<string, unknown>;
const list = (b: Json, k: string) => (Array.isArray(b[k]) ? (b[k] as unknown[]) : []);
/** No provider asked failed. */
const allAnswered = (b: Json) => list(b, 'unresponsive').length === 0;

interface Endpoint {
  /** Section name (BENCH_ONLY) and mix name. */
  name: string;
  label: string;
  /** The request path for the n-th query. */
  path(n: number): string;
  /** Which floor it is measured against. */
  floor: 'fanout' | 'json';
  /** Share of the mixed load, %. */
  mix: number;
  /** Sanity check of a 200 body (run once on both sides before any load). */
  check(body: Json): boolean;
  /** The query of the sanity check (default: path(0)). */
  sample?: string;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'web',
    label: 'web search',
    path: (n) => `/api/v1/web/?q=${enc(`${pick(WEB_QUERIES, n)} ${n}`)}`,
    floor: 'fanout',
    mix: 50,
    check: (b) => list(b, 'results').length > 0 && allAnswered(b),
  },
  {
    name: 'images',
    label: 'images (Brave + Pixabay)',
    path: (n) => `/api/v1/images/?q=${enc(`${pick(IMAGE_QUERIES, n)} ${n}`)}`,
    floor: 'fanout',
    mix: 8,
    check: (b) => list(b, 'results').length > 0 && allAnswered(b),
  },
  {
    name: 'news',
    label: 'news (Brave + World News)',
    path: (n) => `/api/v1/news/?q=${enc(`${pick(NEWS_QUERIES, n)} ${n}`)}`,
    floor: 'fanout',
    mix: 6,
    check: (b) => list(b, 'results').length > 0 && allAnswered(b),
  },
  {
    name: 'videos',
    label: 'videos (Sepia + Brave)',
    path: (n) => `/api/v1/videos/?q=${enc(`${pick(VIDEO_QUERIES, n)} ${n}`)}`,
    floor: 'fanout',
    mix: 4,
    check: (b) => list(b, 'results').length > 0 && allAnswered(b),
  },
  {
    name: 'suggest',
    label: 'suggest',
    path: (n) => `/api/v1/suggest/?q=${enc(`${pick(SUGGEST_PREFIXES, n)} ${n}`)}`,
    floor: 'fanout',
    mix: 20,
    check: (b) => list(b, 'suggestions').length > 0,
  },
  {
    name: 'maps',
    label: 'maps (reverse)',
    path: mapsPath,
    floor: 'fanout',
    mix: 2,
    check: (b) => ['Berlin', 'Paris'].includes(String((list(b, 'places')[0] as Json | undefined)?.name)),
  },
  {
    name: 'translate',
    label: 'translate',
    path: (n) => `/api/v1/translate/?q=${enc(`${pick(TRANSLATE_TEXTS, n)} ${n}`)}&target=${pick(TRANSLATE_TARGETS, n)}`,
    floor: 'fanout',
    mix: 1,
    check: (b) => typeof b.translated_text === 'string' && b.translated_text !== '',
  },
  {
    name: 'cards',
    label: 'cards',
    path: (n) => `/api/v1/cards/?q=${enc(`${pick(CARD_QUERIES, n)} ${n}`)}`,
    floor: 'fanout',
    mix: 3,
    // Breaking Bad: Wikipedia, Wikidata, the four engines and TheTVDB (login, search, details) all answered.
    sample: `/api/v1/cards/?q=${enc('breaking bad 0')}`,
    check: (b) => b.wikipedia !== null && b.thetvdb !== null,
  },
  {
    name: 'instant',
    label: 'instant answers',
    path: (n) => `/api/v1/instant/?q=${enc(pick(INSTANT_QUERIES, n)(n))}`,
    floor: 'json',
    mix: 6,
    check: (b) => b.answer !== null && typeof b.answer === 'object',
  },
];

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
  /**
   * The section's own A/A spread, as printed: how far two runs of the same side (or the floor
   * against itself) differed, in the figure's unit. Absent for a bound no such noise moves (an
   * error count, a hung call's outcome).
   */
  aa?: string;
  /** Missed, but by no more than that spread: reported as "within noise", not as "not met". */
  withinNoise?: boolean;
}

/**
 * A figure against its bound, read with the section's A/A spread (in the figure's own unit): met;
 * missed by no more than the spread (within noise); or not met.
 */
function judge(
  value: number,
  bound: number,
  wanted: 'at least' | 'at most',
  spread: number,
): { met: boolean; withinNoise: boolean } {
  const miss = wanted === 'at least' ? bound - value : value - bound;
  return { met: miss <= 0, withinNoise: miss > 0 && miss <= spread };
}

/** How far two runs of the same side differ, relative to their mean (0 when either is missing). */
function relativeSpread(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || a + b <= 0) return 0;
  return Math.abs(a - b) / ((a + b) / 2);
}

/** How far runs of the same load differed at most (their range; 0 when one is missing). */
function spreadOf(values: readonly (number | undefined)[]): number {
  const xs = values.filter((x): x is number => x !== undefined);
  return xs.length < 2 || xs.length < values.length ? 0 : Math.max(...xs) - Math.min(...xs);
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** The verdict printed for a target. */
const verdict = (t: Target) => (t.met ? 'met' : t.withinNoise ? 'within noise' : 'NOT MET');

/** BENCH_ONLY=web,limits runs only those sections (start always runs). */
const SECTIONS = [
  ...ENDPOINTS.map((e) => e.name),
  'mix',
  'health',
  'gate',
  'hung',
  'limits',
  'metrics',
  'workers',
  'side',
  'quota',
  'contents',
];
const ONLY = new Set(
  (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const wants = (section: string) => ONLY.size === 0 || ONLY.has(section);

function f1(n: number): string {
  return n.toFixed(1);
}
const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);

/** A row of the results table: Sift against its floor. */
function tableRow(name: string, c: number | string, s: Load, floor?: Load): string {
  const fl = floor ?? ({ rps: 0, p50: 0, p99: 0, requests: 0, non2xx: 0, errors: 0 } as Load);
  const cpu = (l: Load) => l.cpuMsPerRequest?.toFixed(3) ?? '-';
  const pg = s.pgCpuMsPerRequest?.toFixed(3) ?? '-';
  const cpuRatio =
    floor && s.cpuMsPerRequest !== undefined && fl.cpuMsPerRequest
      ? ratio(s.cpuMsPerRequest, fl.cpuMsPerRequest).toFixed(2)
      : '-';
  return `| ${name} | ${c} | ${f1(s.rps)} | ${floor ? f1(fl.rps) : '-'} | ${floor ? ratio(s.rps, fl.rps).toFixed(2) : '-'} | ${s.p50} / ${s.p99} | ${floor ? `${fl.p50} / ${fl.p99}` : '-'} | ${cpu(s)} / ${floor ? cpu(fl) : '-'} | ${cpuRatio} | ${pg} | ${s.non2xx + fl.non2xx} / ${s.errors + fl.errors} |`;
}

/** The mix as a sequence of 100 endpoints, each as often as its share, spread out (smooth weighted round robin). */
function mixSchedule(endpoints: readonly Endpoint[]): Endpoint[] {
  const total = endpoints.reduce((n, e) => n + e.mix, 0);
  const current = endpoints.map(() => 0);
  const out: Endpoint[] = [];
  for (let i = 0; i < total; i++) {
    let best = 0;
    endpoints.forEach((e, j) => {
      current[j]! += e.mix;
      if (current[j]! > current[best]!) best = j;
    });
    current[best]! -= total;
    out.push(endpoints[best]!);
  }
  return out;
}

/**
 * A load over several endpoints: one template whose requests take the next endpoint of the shared
 * cycle (so the shares hold over all connections together); the connection's context remembers it
 * until the answer comes back, for `onStatus`.
 */
function mixedLoad(
  url: string,
  schedule: readonly Endpoint[],
  connections: number,
  duration: number,
  headersFor: () => Record<string, string>,
  onStatus: (endpoint: string, status: number) => void = () => {},
) {
  let turn = 0;
  return autocannon({
    url,
    connections,
    duration,
    requests: [
      {
        method: 'GET',
        setupRequest: (req: autocannon.Request, context: object) => {
          const e = schedule[turn++ % schedule.length]!;
          (context as { endpoint?: string }).endpoint = e.name;
          return { ...req, path: e.path(++queryCounter), headers: { ...req.headers, ...headersFor() } };
        },
        onResponse: (status: number, _body: string, context: object) =>
          onStatus(String((context as { endpoint?: string }).endpoint), status),
      },
    ],
  });
}

async function main() {
  log('building dist/');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error('build failed');
  // The build's files (~11 MB) on disk now, not while the cold start measured next creates a
  // cluster: on ext4 each of initdb's fsyncs may also wait for other files' dirty pages.
  spawnSync('sync');
  for (const s of ONLY)
    if (!SECTIONS.includes(s)) throw new Error(`BENCH_ONLY: unknown section ${s} (${SECTIONS.join(', ')})`);

  const work = mkdtempSync(path.join(os.tmpdir(), 'sift-bench-'));
  const logFile = path.join(work, 'sift.log');
  log(`work dir ${work} (Sift log: ${logFile})`);

  log(`starting the fake upstreams (latency ${LATENCY} ms)`);
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
    ...NEVER_REFUSING_LIMITS,
    // The endpoint targets compare one process with the one-process floors; the workers section scales it.
    WORKERS: '1',
  };

  const targets: Target[] = [];
  const rows: string[] = [];
  const notes: string[] = [];
  const results: Record<string, unknown> = {};

  // Start-up as a user gets it: WORKERS as set for the bench, else the default (one per core).
  const startWorkers = process.env.WORKERS || 'auto';
  log(
    `cold start of Sift (WORKERS=${startWorkers}) with an empty database, then a restart; then a restart of one process; then a cold start with another empty database`,
  );
  // Inside the project, as a user's default DATA_DIR (./data) is: on the filesystem of the build's
  // cluster template and its spare (node_modules/.cache), which a temporary directory may not be (tmpfs).
  const coldDirs = mkdtempSync(path.join(root, 'bench', 'results', 'cold-start-'));
  const startEnv = {
    ...baseEnv,
    WORKERS: startWorkers,
    DATA_DIR: path.join(coldDirs, 'cold'),
    DATABASE_URL: EXTERNAL_DB,
  };
  // How the cold start made its cluster, from its log: the build's spare taken whole (src/db/embedded.ts),
  // or the template copied (no spare: taken by an earlier start; or DATA_DIR on another filesystem).
  const clusterMade = (logText: string) =>
    logText.includes('from the spare of the template')
      ? "the build's spare cluster"
      : logText.includes('from the template')
        ? 'the template copied'
        : 'initdb';
  const logSoFar = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const logBefore = logSoFar().length;
  let sift = await startSift(startEnv, logFile);
  const coldStartMs = sift.startMs;
  await stop(sift.child);
  const coldStartCluster = EXTERNAL_DB ? 'DATABASE_URL' : clusterMade(logSoFar().slice(logBefore));
  sift = await startSift(startEnv, logFile);
  const restartMs = sift.startMs;
  await stop(sift.child);
  sift = await startSift({ ...startEnv, WORKERS: '1' }, logFile);
  const oneProcessRestartMs = sift.startMs;
  await stop(sift.child);
  // A second cold start in another empty DATA_DIR, with the spare taken: the template copied. After the
  // restarts, so that they do not run while the disk writes back the copy's files.
  let coldCopy: { ms: number; cluster: string } | undefined;
  if (!EXTERNAL_DB) {
    const copyLogBefore = logSoFar().length;
    sift = await startSift({ ...startEnv, DATA_DIR: path.join(coldDirs, 'cold-2') }, logFile);
    await stop(sift.child);
    coldCopy = { ms: sift.startMs, cluster: clusterMade(logSoFar().slice(copyLogBefore)) };
  }
  rmSync(coldDirs, { recursive: true, force: true });
  Object.assign(results, { startWorkers, coldStartMs, coldStartCluster, coldCopy, restartMs, oneProcessRestartMs });
  if (coldCopy) {
    notes.push(
      `Cold starts: the first (the target's) made its cluster from ${coldStartCluster}; a second, in another empty DATA_DIR, from ${coldCopy.cluster}: ${f1(coldCopy.ms)} ms to /up 200.`,
    );
  }

  log('PostgreSQL for the load runs');
  const pgsql = EXTERNAL_DB ? null : await startEmbeddedPostgres({ dataDir: path.join(work, 'data') });
  if (pgsql)
    postmasterPid = Number(readFileSync(path.join(work, 'data', 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
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
  const { rows: userRows } = await pool.query<{ id: string }>("SELECT id FROM users WHERE username = 'bench'");
  const userId = Number(userRows[0]!.id);
  const keys: { id: number; key: string }[] = [];
  for (let i = 0; i < KEYS; i++) keys.push(await issueApiKey(pool, userId, `bench ${i}`));
  let keyTurn = 0;
  const rotatingAuth = () => ({ authorization: `Api-Key ${keys[keyTurn++ % keys.length]!.key}` });

  // PostgreSQL's CPU of Sift's own backends (the pool's application_name, sift:<pid>): the
  // statements of the gate and the limiter run there. The whole server's also holds its background
  // work (autovacuum, the checkpointer, the WAL writer, the bench's own connections ending, counted
  // in 10 ms ticks once reaped), which comes when it comes: one key's web searches take some 50 ms
  // of PostgreSQL CPU in a run, and one autovacuum worker in one run and not in another moved the
  // ratio of a full window's figure to an empty one's from 0.7x to 1.95x. pg_stat_activity lists
  // them; their CPU is read from /proc, as every other process's here.
  const siftBackends = async (pids: readonly number[]): Promise<number[]> =>
    (
      await pool.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = ANY($1) OR application_name LIKE ANY($2)',
        [pids.map((p) => `sift:${p}`), pids.map((p) => `sift:${p}:%`)],
      )
    ).rows.map((r) => r.pid);
  /**
   * Runs `run` with a meter of the CPU (ms so far) of the backends of Sift processes `pids`, and
   * gives what it returned with the CPU of the backends that started during it, counted whole
   * (they did all their work within it). Each backend's CPU is kept as last seen: one that ends
   * during the run was idle (the pool closes only idle connections, after 5 minutes).
   */
  const withSiftBackends = async <T>(
    pids: readonly number[],
    run: (backendsCpuMs: () => number) => Promise<T>,
  ): Promise<{ value: T; startedMs: number }> => {
    const backends = await siftBackends(pids);
    const lastSeen = new Map<number, number>();
    const backendsCpuMs = () => {
      for (const p of backends) {
        const now = cpuMsOf(p);
        if (now > 0) lastSeen.set(p, now);
      }
      let ms = 0;
      for (const v of lastSeen.values()) ms += v;
      return ms;
    };
    const value = await run(backendsCpuMs);
    const startedMs = (await siftBackends(pids))
      .filter((p) => !backends.includes(p))
      .reduce((n, p) => n + cpuMsOf(p), 0);
    return { value, startedMs };
  };
  /** A run's PostgreSQL CPU per request with that of the backends started during it. */
  const withStarted = (l: Load, startedMs: number): Load =>
    l.pgCpuMsPerRequest === undefined || l.requests === 0
      ? l
      : { ...l, pgCpuMsPerRequest: l.pgCpuMsPerRequest + startedMs / l.requests };

  log('starting the floors');
  // The floors run with Sift's V8 heap flags (bin/sift-server), so that a ratio compares code, not
  // heap settings. With V8's default young generation (which grows and shrinks with the load), two
  // identical fan-out floors differed in CPU per request by up to 30 %, steadily for their
  // lifetime; with these flags, by at most 13 % (bench/README.md).
  const floorFlags = serverNodeFlags(root);
  const floorJson = await startJsonProcess<{ url: string }>([...floorFlags, '--import', 'tsx', 'bench/floor-json.ts']);
  const floorFanout = await startJsonProcess<{ url: string }>([
    ...floorFlags,
    '--import',
    'tsx',
    'bench/floor-fanout.ts',
    JSON.stringify(fakes.info.env),
  ]);
  const floorOf = (e: Endpoint) =>
    e.floor === 'json'
      ? { url: floorJson.info.url, pid: floorJson.child.pid, label: 'bare JSON route' }
      : { url: floorFanout.info.url, pid: floorFanout.child.pid, label: 'fan-out floor' };

  // Sanity: every endpoint answers 200 with what its providers should give, on Sift and on its floor.
  for (const e of ENDPOINTS) {
    const sides: [string, string, Record<string, string>][] = [['sift', sift.url, auth]];
    if (e.floor === 'fanout') sides.push(['floor', floorFanout.info.url, {}]);
    for (const [side, url, headers] of sides) {
      const res = await fetch(`${url}${e.sample ?? e.path(0)}`, { headers });
      const body = (await res.json()) as Json;
      if (res.status !== 200 || !e.check(body)) {
        throw new Error(`${side}: ${e.name} is not working: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      }
    }
  }
  const next = (e: Endpoint) => () => e.path(++queryCounter);

  // Warm-up of both sides over every endpoint at once (JIT, connection pools to every fake, the
  // database pool, the API-key cache), so that the first section measured is not the cold one.
  // (The limits section searches the web.)
  const selected = ENDPOINTS.filter(
    (e) =>
      wants(e.name) ||
      wants('mix') ||
      (e.name === 'web' && (wants('limits') || wants('metrics') || wants('side') || wants('gate'))),
  );
  if (selected.length > 0 && WARMUP_ALL > 0) {
    log(`warm-up: every endpoint, ${WARMUP_ALL} s on each side`);
    const fanout = selected.filter((e) => e.floor === 'fanout');
    if (fanout.length > 0) await mixedLoad(floorFanout.info.url, mixSchedule(fanout), 50, WARMUP_ALL, () => ({}));
    await mixedLoad(sift.url, mixSchedule(selected), 50, WARMUP_ALL, rotatingAuth);
  }

  // ---- every search endpoint against its floor ----
  const endpointResults: Record<string, Record<number, Pair>> = {};
  for (const e of ENDPOINTS) {
    if (!wants(e.name)) continue;
    const floor = floorOf(e);
    const runs: Record<number, Pair> = {};
    for (const c of [10, 100]) {
      log(`${e.label}, ${c} connections: ${floor.label}, sift, ${floor.label}`);
      const targeted = c === 100 || e.name === 'web';
      const pair = await loadPair(
        { floor: { url: floor.url, pid: floor.pid }, sift: { url: sift.url, pid, headers: rotatingAuth } },
        next(e),
        c,
        targeted
          ? { duration: ENDPOINT_DURATION, warmup: ENDPOINT_WARMUP }
          : { duration: UNTARGETED_DURATION, warmup: UNTARGETED_WARMUP },
      );
      runs[c] = pair;
      rows.push(tableRow(e.floor === 'json' ? `${e.label} (vs bare route)` : e.label, c, pair.sift, pair.floor));
    }
    endpointResults[e.name] = runs;
    const at100 = runs[100]!;
    // The floor against itself (its two halves) is the section's A/A: a ratio of two identical
    // sides would stray from 1 by that much.
    const aaOf = (p: Pair) => ({
      rps: relativeSpread(p.floorHalves[0].rps, p.floorHalves[1].rps),
      cpu: relativeSpread(p.floorHalves[0].cpuMsPerRequest, p.floorHalves[1].cpuMsPerRequest),
      p50: Math.abs(p.floorHalves[0].p50 - p.floorHalves[1].p50),
    });
    const aa100 = aaOf(at100);
    const r = ratio(at100.sift.rps, at100.floor.rps);
    if (e.floor === 'json') {
      // No target: the gate section measures what this ratio used to stand for (the gate's cost).
      notes.push(
        `${e.label}: ${r.toFixed(3)}× the bare route's throughput at 100 connections (A/A of the bare route: ${pct(aa100.rps)}); no target, the gate section measures the gate's own cost.`,
      );
      continue;
    }
    if (e.name === 'web') {
      const r10 = ratio(runs[10]!.sift.rps, runs[10]!.floor.rps);
      const aa10 = aaOf(runs[10]!);
      targets.push({
        name: 'web search throughput, 10 connections',
        value: `${r10.toFixed(3)}× floor`,
        target: '≥ 0.85× floor',
        aa: `${pct(aa10.rps)} (floor halves)`,
        ...judge(r10, 0.85, 'at least', r10 * aa10.rps),
      });
    }
    targets.push({
      name: `${e.label} throughput, 100 connections`,
      value: `${r.toFixed(3)}× floor`,
      target: '≥ 0.85× floor',
      aa: `${pct(aa100.rps)} (floor halves)`,
      ...judge(r, 0.85, 'at least', r * aa100.rps),
    });
    const cpu = ratio(at100.sift.cpuMsPerRequest ?? 0, at100.floor.cpuMsPerRequest ?? 0);
    const cpuJudged = judge(cpu, 1.25, 'at most', cpu * aa100.cpu);
    targets.push({
      name: `${e.label} CPU per request, 100 connections`,
      value: `${(at100.sift.cpuMsPerRequest ?? 0).toFixed(3)} vs ${(at100.floor.cpuMsPerRequest ?? 0).toFixed(3)} ms (${cpu.toFixed(3)}×)`,
      target: '≤ 1.25× floor',
      aa: `${pct(aa100.cpu)} (floor halves)`,
      met: cpu > 0 && cpuJudged.met,
      withinNoise: cpu > 0 && cpuJudged.withinNoise,
    });
    if (e.name === 'web') {
      const p50Delta = runs[10]!.sift.p50 - runs[10]!.floor.p50;
      const aa10 = aaOf(runs[10]!);
      targets.push({
        name: 'web search p50, 10 connections',
        value: p50Delta >= 0 ? `floor + ${f1(p50Delta)} ms` : `floor − ${f1(-p50Delta)} ms`,
        target: '≤ floor + 5 ms',
        aa: `${f1(aa10.p50)} ms (floor halves' p50)`,
        ...judge(p50Delta, 5, 'at most', aa10.p50),
      });
    }
  }
  results.endpoints = endpointResults;

  // ---- the mixed load ----
  if (wants('mix')) {
    const schedule = mixSchedule(ENDPOINTS);
    const perEndpoint: Record<string, { requests: number; non2xx: number }> = {};
    for (const e of ENDPOINTS) perEndpoint[e.name] = { requests: 0, non2xx: 0 };
    let counting = false;
    const count = (endpoint: string, status: number) => {
      const p = perEndpoint[endpoint];
      if (!counting || !p) return;
      p.requests++;
      if (status < 200 || status > 299) p.non2xx++;
    };
    const mixRun = (duration: number) => mixedLoad(sift.url, schedule, MIX_CONNECTIONS, duration, rotatingAuth, count);
    log(`mixed load, ${MIX_CONNECTIONS} connections: warm-up`);
    await mixRun(WARMUP);
    log(`mixed load, ${MIX_CONNECTIONS} connections: ${MIX_DURATION} s`);
    counting = true;
    let rssPeak = rssMb(pid);
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMb(pid));
    }, 200);
    const before = cpuMsOf(pid);
    const pgBefore = pgCpuMs();
    const r = await mixRun(MIX_DURATION);
    const pgAfter = pgCpuMs();
    clearInterval(sampler);
    counting = false;
    rssPeak = Math.max(rssPeak, rssMb(pid));
    const total = r.requests.total;
    const mix: Load = {
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      requests: total,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
      cpuMsPerRequest: total > 0 ? (cpuMsOf(pid) - before) / total : undefined,
      pgCpuMsPerRequest: total > 0 && pgAfter >= pgBefore ? (pgAfter - pgBefore) / total : undefined,
    };
    rows.push(tableRow('mixed load (see below)', MIX_CONNECTIONS, mix));
    const shares = [...ENDPOINTS].sort((a, b) => b.mix - a.mix).map((e) => `${e.name} ${e.mix}%`);
    const served = ENDPOINTS.map((e) => {
      const p = perEndpoint[e.name]!;
      return `${e.name} ${p.requests}${p.non2xx ? ` (${p.non2xx} non-2xx)` : ''}`;
    });
    notes.push(
      `Mixed load: ${shares.join(', ')} (a fixed interleaved cycle of 100 requests shared by the connections, every query new, keys rotating); ${mix.requests} requests in ${MIX_DURATION} s, ${f1(mix.rps)} req/s, p50 ${mix.p50} ms, p99 ${mix.p99} ms, non-2xx ${mix.non2xx}, errors ${mix.errors}. Served: ${served.join(', ')}. Sift RSS during the mix: peak ${f1(rssPeak)} MB.`,
    );
    targets.push({
      name: 'RSS of the worker under the mixed load',
      value: `${f1(rssPeak)} MB`,
      target: '≤ 250 MB',
      met: rssPeak <= 250,
    });
    targets.push({
      name: 'mixed load errors',
      value: `${mix.non2xx} non-2xx, ${mix.errors} errors`,
      target: 'none',
      met: mix.non2xx === 0 && mix.errors === 0,
    });
    results.mix = { load: mix, perEndpoint, peakRssMb: rssPeak, connections: MIX_CONNECTIONS, durationS: MIX_DURATION };
  }

  if (wants('health')) {
    const health: Record<string, Pair> = {};
    for (const c of [10, 100]) {
      log(`/status/health, ${c} connections: bare route, sift, bare route`);
      health[c] = await loadPair(
        { floor: { url: floorJson.info.url, pid: floorJson.child.pid }, sift: { url: sift.url, pid } },
        () => '/status/health',
        c,
        { duration: DURATION, warmup: WARMUP },
      );
      rows.push(tableRow('/status/health (vs bare route)', c, health[c]!.sift, health[c]!.floor));
    }
    const at100 = health[100]!;
    const hr = ratio(at100.sift.rps, at100.floor.rps);
    const aa = relativeSpread(at100.floorHalves[0].rps, at100.floorHalves[1].rps);
    targets.push({
      name: '/status/health throughput, 100 connections',
      value: `${hr.toFixed(3)}× bare route`,
      target: '≥ 0.5× bare route',
      aa: `${pct(aa)} (bare route halves)`,
      ...judge(hr, 0.5, 'at least', hr * aa),
    });
    results.health = health;
  }

  if (wants('gate')) {
    // The gate's own cost: an admitted GET /api/v1/ (key, limits, the admission statement) against
    // the bare route answering the same index (bench/floor-json.ts, Sift's own apiIndex). Two pairs,
    // so that each side is measured twice: Sift's two runs and the bare route's four halves are the
    // A/A. PostgreSQL's CPU is that of Sift's own backends, as in the limits section; the bare
    // route has none.
    const siftSide: Side = { url: sift.url, pid, headers: rotatingAuth };
    const floorSide: Side = { url: floorJson.info.url, pid: floorJson.child.pid, pgCpuMs: () => 0 };
    const pairs: Pair[] = [];
    for (let i = 0; i < 2; i++) {
      log(`gate cost: GET /api/v1/ admitted vs the bare route, 100 connections (pair ${i + 1} of 2)`);
      const { value: p, startedMs } = await withSiftBackends([pid], (backendsCpuMs) =>
        loadPair({ floor: floorSide, sift: { ...siftSide, pgCpuMs: backendsCpuMs } }, () => '/api/v1/', 100, {
          duration: DURATION,
          warmup: WARMUP,
        }),
      );
      pairs.push({ ...p, sift: withStarted(p.sift, startedMs) });
    }
    log('gate cost: GET /api/v1/ without a key (401, no database), for reference');
    const withoutKey = await load(sift.url, () => '/api/v1/', 100, { pid });
    for (const [i, p] of pairs.entries())
      rows.push(tableRow(`GET /api/v1/ admitted (vs bare route), pair ${i + 1}`, 100, p.sift, p.floor));
    rows.push(tableRow('GET /api/v1/ without a key (401)', 100, withoutKey));
    const mean = (xs: (number | undefined)[]) => xs.reduce<number>((n, x) => n + (x ?? 0), 0) / xs.length;
    const siftCpu = pairs.map((p) => p.sift.cpuMsPerRequest);
    const floorCpu = pairs.flatMap((p) => p.floorHalves.map((h) => h.cpuMsPerRequest));
    const siftPg = pairs.map((p) => p.sift.pgCpuMsPerRequest);
    const cpuCost = mean(siftCpu) - mean(floorCpu);
    const pgCost = mean(siftPg);
    // Each side against itself: Sift's two runs, the bare route's halves (the larger of the two).
    const cpuAa = Math.max(
      spreadOf(siftCpu),
      ...pairs.map((p) => spreadOf(p.floorHalves.map((h) => h.cpuMsPerRequest))),
    );
    const pgAa = spreadOf(siftPg);
    const measured = siftCpu.every((x) => x !== undefined) && floorCpu.every((x) => x !== undefined);
    const cpuJudged = judge(cpuCost, 0.15, 'at most', cpuAa);
    targets.push({
      name: 'gate cost: Sift CPU of an admitted GET /api/v1/ above the bare route, 100 connections',
      value: measured
        ? `${cpuCost.toFixed(3)} ms (${mean(siftCpu).toFixed(3)} vs ${mean(floorCpu).toFixed(3)})`
        : 'not measured',
      target: '≤ 0.15 ms',
      aa: `${cpuAa.toFixed(3)} ms (Sift's two runs; the bare route's halves)`,
      met: measured && cpuJudged.met,
      withinNoise: measured && cpuJudged.withinNoise,
    });
    const pgMeasured = siftPg.every((x) => x !== undefined);
    const pgJudged = judge(pgCost, 0.1, 'at most', pgAa);
    targets.push({
      name: "gate cost: Postgres CPU (Sift's backends) of an admitted GET /api/v1/, 100 connections",
      value: pgMeasured ? `${pgCost.toFixed(3)} ms (${siftPg.map((x) => x!.toFixed(3)).join(', ')})` : 'not measured',
      target: '≤ 0.10 ms (the bare route: none)',
      aa: `${pgAa.toFixed(3)} ms (Sift's two runs)`,
      met: pgMeasured && pgJudged.met,
      withinNoise: pgMeasured && pgJudged.withinNoise,
    });
    results.gate = {
      pairs,
      withoutKey,
      sift401CpuMsPerRequest: withoutKey.cpuMsPerRequest,
      cpuCostMs: cpuCost,
      pgCostMs: pgCost,
    };
  }

  if (wants('hung')) {
    log('hung engine (provider_04 never answers)');
    await fetch(`${fakes.info.control}/mode?engine=staan&kind=hang`, { method: 'POST' });
    const hung: { ms: number; others: boolean; unresponsive: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const res = await fetch(`${sift.url}/api/v1/web/?q=hung+engine+${i}`, { headers: auth });
      const body = (await res.json()) as {
        results: { source: string }[];
        unresponsive: { engine: string; reason: string }[];
      };
      hung.push({
        ms: performance.now() - started,
        others: res.status === 200 && body.results.length > 0,
        unresponsive: body.unresponsive.map((u) => `${u.engine}:${u.reason}`).join(','),
      });
    }
    await new Promise((r) => setTimeout(r, 1500));
    const hungHealth = (await (await fetch(`${sift.url}/status/health/provider_04`)).json()) as { state: string };
    await fetch(`${fakes.info.control}/mode?engine=staan&kind=normal`, { method: 'POST' });
    const hungWorst = Math.max(...hung.map((h) => h.ms));
    const hungOk =
      hungWorst <= ENGINE_TIMEOUT_MS + 50 && hung.every((h) => h.others && h.unresponsive.includes('provider_04'));
    targets.push({
      name: 'hung engine',
      value: `${f1(hungWorst)} ms, others present: ${hung.every((h) => h.others)}, recorded ${hungHealth.state}`,
      target: `≤ ${ENGINE_TIMEOUT_MS + 50} ms with the others' results, recorded down`,
      met: hungOk && hungHealth.state === 'down',
    });
    notes.push(
      `Hung engine: ${hung.map((h) => `${f1(h.ms)} ms (${h.unresponsive})`).join('; ')}; provider_04 state afterwards: ${hungHealth.state}.`,
    );
    results.hungEngine = { runs: hung, state: hungHealth.state, timeoutMs: ENGINE_TIMEOUT_MS };
  }

  if (wants('limits')) {
    // Sift runs with limits that never refuse (NEVER_REFUSING_LIMITS): what is measured is the cost of deciding.
    const web = ENDPOINTS.find((e) => e.name === 'web')!;
    const single = (k: string) => () => ({ authorization: `Api-Key ${k}` });
    const fresh = async () => (await issueApiKey(pool, userId, `bench fresh ${Date.now()}`)).key;
    /** Fills a key's sustained window with `total` admissions spread over the last day (1440 one-minute buckets). */
    const fill = async (k: { id: number; key: string }, total: number) => {
      await fetch(`${sift.url}/api/v1/key/`, { headers: single(k.key)() }); // creates the key's row
      await pool.query(
        `UPDATE rate_limits SET
           sustained_closed_at = ARRAY(SELECT extract(epoch FROM clock_timestamp()) - 86400 + 120 + 60 * i FROM generate_series(0, 1437) AS i),
           sustained_closed_count = ARRAY(SELECT ($2::int / 1438) + CASE WHEN i < $2::int % 1438 THEN 1 ELSE 0 END FROM generate_series(0, 1437) AS i),
           sustained_oldest_closed_at = extract(epoch FROM clock_timestamp()) - 86400 + 120,
           sustained_admitted = $2 + sustained_open_count
         WHERE key_id = $1`,
        [k.id, total],
      );
    };
    // PostgreSQL's figure here is the CPU of the backends of Sift's own connections (siftBackends).
    const limiterLoad = async (headers: () => Record<string, string>): Promise<Load> => {
      const { value, startedMs } = await withSiftBackends([pid], (backendsCpuMs) =>
        load(sift.url, next(web), 100, { headers, pid, pgCpuMs: backendsCpuMs }),
      );
      return withStarted(value, startedMs);
    };
    log('rate limiter: web search, 100 connections, 1,000 keys');
    const many = await limiterLoad(rotatingAuth);
    log('rate limiter: web search, 100 connections, one key (empty window)');
    const one = await limiterLoad(single(await fresh()));
    const filled: Record<string, Load> = {};
    for (const total of [5000, 100000]) {
      const k = await issueApiKey(pool, userId, `bench full ${total}`);
      await fill(k, total);
      log(`rate limiter: web search, 100 connections, one key whose sustained window holds ${total}`);
      filled[total] = await limiterLoad(single(k.key));
    }
    // The section's A/A: the 1,000-key load and the empty window measured a second time.
    log('rate limiter: web search, 100 connections, 1,000 keys again, then one new key again (A/A)');
    const manyAgain = await limiterLoad(rotatingAuth);
    const oneAgain = await limiterLoad(single(await fresh()));
    rows.push(tableRow(`web, ${KEYS} keys`, 100, many));
    rows.push(tableRow('web, one key, empty window', 100, one));
    for (const [total, l] of Object.entries(filled)) rows.push(tableRow(`web, one key, ${total} in window`, 100, l));
    rows.push(tableRow(`web, ${KEYS} keys (again, A/A)`, 100, manyAgain));
    rows.push(tableRow('web, one new key, empty window (again, A/A)', 100, oneAgain));
    const oneRatio = ratio(one.rps, many.rps);
    const rpsAa = relativeSpread(many.rps, manyAgain.rps);
    targets.push({
      name: `one key vs ${KEYS} keys, 100 connections`,
      value: `${oneRatio.toFixed(3)}×`,
      target: '≥ 0.85×',
      aa: `${pct(rpsAa)} (${KEYS} keys twice)`,
      ...judge(oneRatio, 0.85, 'at least', oneRatio * rpsAa),
    });
    const pgEmpty = one.pgCpuMsPerRequest;
    const pgAa = relativeSpread(one.pgCpuMsPerRequest, oneAgain.pgCpuMsPerRequest);
    for (const [total, l] of Object.entries(filled)) {
      const pgFull = l.pgCpuMsPerRequest;
      const measured = pgEmpty !== undefined && pgFull !== undefined && pgEmpty > 0;
      const r = measured ? ratio(pgFull, pgEmpty) : 0;
      const judged = judge(r, 1.2, 'at most', r * pgAa);
      targets.push({
        name: `Postgres CPU per search (Sift's backends), window of ${total} vs empty`,
        value: measured
          ? `${pgFull.toFixed(3)} vs ${pgEmpty.toFixed(3)} ms (${r.toFixed(3)}×)`
          : 'not measured (no request served)',
        target: 'within 20%',
        aa: `${pct(pgAa)} (two empty windows)`,
        met: measured && judged.met,
        withinNoise: measured && judged.withinNoise,
      });
    }
    results.limits = { manyKeys: many, oneKey: one, filled, manyKeysAgain: manyAgain, oneKeyAgain: oneAgain };
  }

  if (wants('metrics')) {
    // Two new Sifts on the same database, one with metrics on, started and warmed up alike (the main
    // Sift has served every section by now: its caches and heap are not a fresh one's), both under
    // load at the same time in each round (loadTogether), compared by the median of the rounds'
    // ratios. Measured one after the other, in alternating pairs of rounds, the pairs' ratios went
    // from 0.818 to 1.219 within one run: the machine's drift between two rounds a few seconds apart
    // is many times the 3 % to be told apart.
    log('metrics cost: web search, 100 connections, metrics off vs on');
    const web = ENDPOINTS.find((e) => e.name === 'web')!;
    const withoutMetrics = await startSift({ ...siftEnv, ...NEVER_REFUSING_LIMITS, METRICS_ENABLED: 'false' }, logFile);
    const withMetrics = await startSift({ ...siftEnv, ...NEVER_REFUSING_LIMITS, METRICS_ENABLED: 'true' }, logFile);
    // Warmed up as the main Sift was before its first section (JIT, key cache, upstream connections).
    await mixedLoad(withoutMetrics.url, [web], 50, WARMUP_ALL, rotatingAuth);
    await mixedLoad(withMetrics.url, [web], 50, WARMUP_ALL, rotatingAuth);
    const sides = {
      a: { url: withoutMetrics.url, pid: withoutMetrics.child.pid, headers: rotatingAuth },
      b: { url: withMetrics.url, pid: withMetrics.child.pid, headers: rotatingAuth },
    };
    const off: Load[] = [];
    const on: Load[] = [];
    for (let i = 0; i < METRICS_ROUNDS; i++) {
      const { a, b } = await loadTogether(sides, next(web), 100, {
        duration: METRICS_ROUND_DURATION,
        warmup: ROUND_WARMUP,
      });
      off.push(a);
      on.push(b);
    }
    const ratios = off.map((x, i) => ratio(on[i]!.rps, x.rps));
    const runs = { off, on };
    const scrape = await fetch(`${withMetrics.url}/metrics`);
    const scraped = scrape.status === 200 && (await scrape.text()).includes('sift_');
    await stop(withMetrics.child);
    await stop(withoutMetrics.child);
    const r = median(ratios);
    for (const [side, list] of [
      ['off', runs.off],
      ['on', runs.on],
    ] as const) {
      for (const [i, l] of list.entries()) rows.push(tableRow(`web, metrics ${side} (round ${i + 1})`, 100, l));
    }
    targets.push({
      name: 'web throughput with metrics on, 100 connections',
      value: `${r.toFixed(3)}× metrics off (median of ${METRICS_ROUNDS} rounds, both loaded at once: ${ratios.map((x) => x.toFixed(3)).join(', ')})${scraped ? '' : ' (scrape failed)'}`,
      target: '≥ 0.97× (at most 3% cost)',
      // Each round's ratio is one comparison under the same load at once: how far they stray from
      // one another is this section's noise.
      aa: `${spreadOf(ratios).toFixed(3)} (range of the rounds' ratios)`,
      met: scraped && r >= 0.97,
      withinNoise: scraped && judge(r, 0.97, 'at least', spreadOf(ratios)).withinNoise,
    });
    results.metrics = { ...runs, roundRatios: ratios, ratio: r, scraped };
  }

  if (wants('workers')) {
    // The same load on one process and on WORKERS processes (a second Sift on the same database),
    // compared in alternating pairs of short rounds by the median of the pairs' ratios
    // (alternatingPairs). CPU is the whole server's: primary and workers.
    const count = Math.max(2, os.availableParallelism());
    log(`workers: web search, 100 connections, 1 process vs WORKERS=${count}`);
    const web = ENDPOINTS.find((e) => e.name === 'web')!;
    const clustered = await startSift({ ...siftEnv, WORKERS: String(count) }, logFile);
    const workerPids = childPids(clustered.child.pid!);
    const whole = () => [clustered.child.pid!, ...workerPids].reduce((n, p) => n + cpuMsOf(p), 0);
    // Each worker warmed up as the main Sift was before its first section: the workers share the
    // warm-up's requests, so it lasts as many times longer as there are workers (with one share, the
    // first clustered round still ran at up to 1.4x the CPU per request of the second).
    await mixedLoad(clustered.url, [web], 50, WARMUP_ALL * count, rotatingAuth);
    // And the main Sift again, idle meanwhile: its first round, right after, went to the database for
    // most keys (their cached rows and leases gone): 0.46-0.60 PostgreSQL CPU ms a search against
    // 0.09-0.16 in its later rounds, at about half their rate, on 2026-12-01, which put the first
    // pair's ratio at 1.27-1.61 for the cluster in every run.
    await mixedLoad(sift.url, [web], 50, WARMUP_ALL, rotatingAuth);
    const round = { duration: ROUND_DURATION, warmup: ROUND_WARMUP };
    const {
      a: one,
      b: many,
      ratios,
    } = await alternatingPairs(
      WORKERS_PAIRS,
      () => load(sift.url, next(web), 100, { headers: rotatingAuth, pid, ...round }),
      // The cluster's CPU over the measured run only (until 2026-11-30 its warm-up's was counted too).
      () => load(clustered.url, next(web), 100, { headers: rotatingAuth, cpuMs: whole, ...round }),
    );
    const runs = { one, many };
    const workerRss = workerPids.map((p) => peakRssMb(p));
    await stop(clustered.child);
    const scaling = median(ratios);
    for (const [side, list] of [
      ['1 process', runs.one],
      [`WORKERS=${count}`, runs.many],
    ] as const) {
      for (const [i, l] of list.entries()) rows.push(tableRow(`web, ${side} (round ${i + 1})`, 100, l));
    }
    const maxRss = Math.max(...workerRss);
    targets.push({
      name: `web throughput with WORKERS=${count}, 100 connections`,
      value: `${scaling.toFixed(3)}× one process (median of ${WORKERS_PAIRS} pairs of rounds: ${ratios.map((x) => x.toFixed(3)).join(', ')})`,
      target: '> 1× (scales with cores; the load generator, fakes and Postgres share these cores)',
      aa: `${spreadOf(ratios).toFixed(3)} (range of the pairs' ratios)`,
      met: scaling > 1,
      withinNoise: scaling <= 1 && 1 - scaling <= spreadOf(ratios),
    });
    targets.push({
      name: `peak RSS per worker (WORKERS=${count})`,
      value: workerRss.map((r) => `${f1(r)} MB`).join(', '),
      target: '≤ 250 MB',
      met: workerRss.length === count && maxRss <= 250,
    });
    // How much of the machine was left for more workers: the whole machine's busy share in each round.
    const busy = (list: Load[]) =>
      list.every((l) => l.machineBusy !== undefined)
        ? list.map((l) => `${Math.round(100 * l.machineBusy!)} %`).join(', ')
        : 'not measured';
    notes.push(
      `Workers: ${count} worker processes (node:cluster) on ${os.availableParallelism()} cores, against one process, both on the same database; the load generator (autocannon, in the bench process), the fake upstreams and PostgreSQL run on the same cores. The whole machine's CPU busy (every core, every process) in each round: 1 process ${busy(runs.one)}; WORKERS=${count} ${busy(runs.many)}.`,
    );
    results.workers = { count, ...runs, pairRatios: ratios, scaling, workerPeakRssMb: workerRss };
  }

  if (wants('side')) {
    // The load of the side by side with SearXNG (issue 69): web search (the four engines at
    // BENCH_LATENCY_MS), a new query on every request, the keys rotating, 100 connections, on a Sift
    // with WORKERS=auto (at least 2) and on the main one (one process), in alternating pairs of
    // rounds. CPU per search is Sift's (primary and workers) and PostgreSQL's (the backends of those
    // processes, siftBackends), each the median of the side's rounds; how far the rounds of one side
    // differ is the section's A/A.
    const setting = os.availableParallelism() >= 2 ? 'auto' : '2';
    const count = Math.max(2, os.availableParallelism());
    const previous = previousSideFigures(path.join(root, 'bench', 'results'), {
      model: os.cpus()[0]?.model ?? 'unknown',
      cpus: os.cpus().length,
    });
    log(`side by side load: web search, 100 connections, ${KEYS} keys, WORKERS=${setting} and 1 process`);
    const web = ENDPOINTS.find((e) => e.name === 'web')!;
    const clustered = await startSift({ ...siftEnv, WORKERS: setting }, logFile);
    const clusterPids = [clustered.child.pid!, ...childPids(clustered.child.pid!)];
    const whole = () => clusterPids.reduce((n, p) => n + cpuMsOf(p), 0);
    // Warmed up as in the workers section: each worker gets the main Sift's warm-up, and the main
    // Sift again, idle meanwhile.
    await mixedLoad(clustered.url, [web], 50, WARMUP_ALL * count, rotatingAuth);
    await mixedLoad(sift.url, [web], 50, WARMUP_ALL, rotatingAuth);
    const round = { duration: SIDE_DURATION, warmup: ROUND_WARMUP };
    const searchLoad = async (url: string, pids: number[], cpu: Pick<LoadOptions, 'pid' | 'cpuMs'>) => {
      const { value, startedMs } = await withSiftBackends(pids, (backendsCpuMs) =>
        load(url, next(web), 100, { headers: rotatingAuth, ...cpu, pgCpuMs: backendsCpuMs, ...round }),
      );
      return withStarted(value, startedMs);
    };
    const { a: oneRuns, b: clusterRuns } = await alternatingPairs(
      SIDE_PAIRS,
      () => searchLoad(sift.url, [pid], { pid }),
      () => searchLoad(clustered.url, clusterPids, { cpuMs: whole }),
    );
    await stop(clustered.child);
    // The fan-out floor (Sift's own feature modules, bare Fastify and undici: no gate, limits or
    // database) under the same load, one process: what the searches themselves cost on this machine,
    // which the absolute target does not know (one kind of machine here costs some 60 % more than another).
    const floorPid = floorFanout.child.pid!;
    const floorRuns: Load[] = [];
    for (let i = 0; i < SIDE_PAIRS; i++)
      floorRuns.push(await load(floorFanout.info.url, next(web), 100, { pid: floorPid, ...round }));
    for (const [i, l] of floorRuns.entries())
      rows.push(tableRow(`side by side load, fan-out floor, 1 process (round ${i + 1})`, 100, l));
    for (const [i, l] of clusterRuns.entries())
      rows.push(tableRow(`side by side load, WORKERS=${setting} (round ${i + 1})`, 100, l));
    for (const [i, l] of oneRuns.entries())
      rows.push(tableRow(`side by side load, 1 process (round ${i + 1})`, 100, l));
    const figures = (runs: Load[]): SideFigures => ({
      rps: median(runs.map((l) => l.rps)),
      siftCpuMsPerSearch: median(runs.map((l) => l.cpuMsPerRequest ?? 0)),
      pgCpuMsPerSearch: median(runs.map((l) => l.pgCpuMsPerRequest ?? 0)),
      totalCpuMsPerSearch: median(runs.map((l) => (l.cpuMsPerRequest ?? 0) + (l.pgCpuMsPerRequest ?? 0))),
      spreadMs: spreadOf(runs.map((l) => (l.cpuMsPerRequest ?? 0) + (l.pgCpuMsPerRequest ?? 0))),
      rpsSpread: spreadOf(runs.map((l) => l.rps)),
    });
    const floorCpu = median(floorRuns.map((l) => l.cpuMsPerRequest ?? 0));
    const side = {
      workers: count,
      setting,
      clustered: figures(clusterRuns),
      oneProcess: figures(oneRuns),
      floorCpuMsPerSearch: floorCpu,
    };
    const describe = (label: string, now: SideFigures, before: SideFigures | undefined) =>
      `${label}: ${f1(now.rps)} req/s, Sift ${now.siftCpuMsPerSearch.toFixed(2)} ms + Postgres ${now.pgCpuMsPerSearch.toFixed(2)} ms CPU a search (A/A: ${now.spreadMs.toFixed(2)} ms, ${f1(now.rpsSpread)} req/s)` +
      (before
        ? `; previous ${f1(before.rps)} req/s, Sift ${before.siftCpuMsPerSearch.toFixed(2)} ms + Postgres ${before.pgCpuMsPerSearch.toFixed(2)} ms`
        : '; no previous figure');
    notes.push(
      `Side by side load (${SIDE_PAIRS} pairs of ${SIDE_DURATION}-s rounds; previous figures: ${previous ? previous.file : 'none in bench/results/*.json'}${previous?.otherMachine ? `, measured on another machine (${previous.otherMachine.cpus} × ${previous.otherMachine.model}): not comparable` : ''}): ${describe(`WORKERS=${setting} (${count} workers)`, side.clustered, previous?.side.clustered)}; ${describe('1 process', side.oneProcess, previous?.side.oneProcess)}. Postgres: the backends of Sift's own connections. The fan-out floor under the same load (one process, Sift's feature modules without gate, limits or database): ${floorCpu.toFixed(2)} ms CPU a search${previous?.side.floorCpuMsPerSearch ? ` (previous ${previous.side.floorCpuMsPerSearch.toFixed(2)} ms)` : ''}; Sift + Postgres at WORKERS=${setting} ${(side.clustered.totalCpuMsPerSearch / floorCpu).toFixed(2)}× it, at one process ${(side.oneProcess.totalCpuMsPerSearch / floorCpu).toFixed(2)}×.`,
    );
    const refused = [...clusterRuns, ...oneRuns].flatMap((l) => Object.entries(l.non2xxByStatus ?? {}));
    if (refused.length > 0) {
      const byStatus = new Map<string, number>();
      for (const [status, n] of refused) byStatus.set(status, (byStatus.get(status) ?? 0) + n);
      notes.push(
        `Side by side load: answers not 2xx (the rounds' CPU per search counts them as searches): ${[...byStatus].map(([status, n]) => `${status} × ${n}`).join(', ')}.`,
      );
    }
    const c = side.clustered;
    // A round with no search served, or whose PostgreSQL figure was lost, gives no figure.
    const measured = clusterRuns.every(
      (l) => l.requests > 0 && l.cpuMsPerRequest !== undefined && l.pgCpuMsPerRequest !== undefined,
    );
    const judged = judge(c.totalCpuMsPerSearch, 1.5, 'at most', c.spreadMs);
    targets.push({
      name: `side by side load, WORKERS=${setting}: Sift + Postgres CPU per search, 100 connections`,
      value: measured
        ? `${c.totalCpuMsPerSearch.toFixed(3)} ms (Sift ${c.siftCpuMsPerSearch.toFixed(3)}, Postgres ${c.pgCpuMsPerSearch.toFixed(3)}; ${f1(c.rps)} req/s)`
        : 'not measured (a round served no search or lost its Postgres figure)',
      target: '≤ 1.5 ms',
      aa: `${c.spreadMs.toFixed(3)} ms (range of its ${SIDE_PAIRS} rounds)`,
      met: measured && judged.met,
      withinNoise: measured && judged.withinNoise,
    });
    // Kept as `side` (what a later run prints beside its own) only when every round gave a figure.
    if (measured) results.side = side;
    else results.sideNotMeasured = side;
  }

  const siftPeakRssMb = peakRssMb(pid);
  results.siftPeakRssMb = siftPeakRssMb;
  await pool.end();
  for (const child of [floorJson.child, floorFanout.child, sift.child, fakes.child]) await stop(child);
  await pgsql?.stop();

  if (wants('quota')) {
    // Upstream calls, not CPU: its own processes, once the others have stopped (bench/quota.ts).
    log("quota: the duplicate-heavy mix and Brave's free plan");
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/quota.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: EXTERNAL_DB },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (run.status !== 0) throw new Error('bench/quota.ts failed');
    const out = run.stdout.trimEnd().split('\n');
    const quota = JSON.parse(out.pop()!) as {
      zipf: { configurations: { name: string; ratio: number; per1000: number }[] };
      freePlan: { upstream429s: number; notAnswered: number; searches: number; seconds: number };
    };
    notes.push(out.join('\n'));
    for (const c of quota.zipf.configurations.filter((x) => x.name !== 'one process')) {
      targets.push({
        name: `upstream calls per 1,000 searches, Zipf mix, ${c.name}`,
        value: `${c.per1000.toFixed(1)} (${c.ratio.toFixed(3)}× one process)`,
        target: '≤ 1.05× one process',
        met: c.ratio <= 1.05,
      });
    }
    const fp = quota.freePlan;
    targets.push({
      name: `Brave free plan, 20 clients for ${fp.seconds} s: upstream 429s; searches not answered`,
      value: `${fp.upstream429s}; ${fp.notAnswered} of ${fp.searches}`,
      target: '0; 0',
      met: fp.upstream429s === 0 && fp.notAnswered === 0,
    });
    results.quota = quota;
  }

  if (wants('contents')) {
    // CPU of this machine's extraction workers, once the other processes have stopped.
    log('contents: extraction quality, CPU per page and the event loop');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/contents.ts'], {
      cwd: root,
      env: { ...process.env, BENCH_CONTENTS_FROM_RUN: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (run.status !== 0) throw new Error('bench/contents.ts failed');
    const out = run.stdout.trimEnd().split('\n');
    const contents = JSON.parse(out.pop()!) as {
      skipped?: string;
      quality?: { f1: number; cpuMedianMs: number; cpuP95Ms: number };
      eventLoop?: { delayP99Ms: number; idleDelayP99Ms: number; clients: number };
    };
    notes.push(out.join('\n'));
    if (contents.quality && contents.eventLoop) {
      targets.push({
        name: 'page extraction F1 (article-extraction-benchmark, text)',
        value: contents.quality.f1.toFixed(3),
        target: '≥ 0.955',
        met: contents.quality.f1 >= 0.955,
      });
      targets.push({
        name: `event loop p99 delay, ${contents.eventLoop.clients} clients extracting (idle: ${contents.eventLoop.idleDelayP99Ms.toFixed(1)} ms)`,
        value: `${contents.eventLoop.delayP99Ms.toFixed(1)} ms`,
        target: '< 20 ms',
        met: contents.eventLoop.delayP99Ms < 20,
      });
    }
    results.contents = contents;
  }

  targets.push({
    name: `cold start (${EXTERNAL_DB ? 'DATABASE_URL' : `embedded, empty, ${coldStartCluster}`}, WORKERS=${startWorkers}) to /up 200`,
    value: `${f1(coldStartMs)} ms`,
    target: '≤ 3000 ms',
    met: coldStartMs <= 3000,
  });
  targets.push({
    name: `restart (WORKERS=${startWorkers}) to /up 200`,
    value: `${f1(restartMs)} ms`,
    target: '≤ 1500 ms',
    met: restartMs <= 1500,
  });
  targets.push({
    name: 'restart (WORKERS=1) to /up 200',
    value: `${f1(oneProcessRestartMs)} ms`,
    target: '≤ 1500 ms',
    met: oneProcessRestartMs <= 1500,
  });

  // ---- report ----
  const totalS = (performance.now() - t0) / 1000;
  const lines: string[] = [];
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout?.trim();
  lines.push(`# Sift benchmark — ${startedAt.toISOString()}${commit ? ` on ${commit}` : ''}`);
  lines.push('');
  const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const settings = `fake upstream latency ${LATENCY} ms; endpoints: ${ENDPOINT_DURATION} s per side after ${ENDPOINT_WARMUP} s warm-up (${UNTARGETED_DURATION} s after ${UNTARGETED_WARMUP} s for the 10-connection runs no target reads), the floor's in two halves around Sift's; metrics: ${METRICS_ROUNDS} rounds of ${METRICS_ROUND_DURATION} s after ${ROUND_WARMUP} s, both Sifts at once; workers: ${WORKERS_PAIRS} pairs of ${ROUND_DURATION}-s rounds after ${ROUND_WARMUP} s; other measures: ${DURATION} s after ${WARMUP} s; database: ${EXTERNAL_DB ? 'DATABASE_URL' : 'embedded'}; one Sift process, API keys rotating over ${KEYS}${ONLY.size ? `; sections: ${[...ONLY].join(', ')}` : ''}`;
  lines.push(
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${loads(loadAtStart)} at the start, ${loads(os.loadavg())} at the end; Node ${process.version}; ${settings}.`,
  );
  lines.push('');
  lines.push(
    '| measure | connections | Sift req/s | floor req/s | ratio | Sift p50 / p99 ms | floor p50 / p99 ms | Sift / floor CPU ms/req | CPU ratio | Postgres CPU ms/req | non-2xx / errors |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|');
  lines.push(...rows);
  lines.push('');
  lines.push(
    'Floors: the fan-out floor (bench/floor-fanout.ts: bare Fastify + bare undici through the same feature modules and the response cache of Sift, no auth, limits, database or health recording) for the fan-out endpoints; the bare JSON route (bench/floor-json.ts) for instant answers and /status/health.',
  );
  for (const n of notes) lines.push('', n);
  lines.push('');
  lines.push('| target | measured | wanted | A/A spread | |');
  lines.push('|---|---|---|---|---|');
  for (const t of targets) lines.push(`| ${t.name} | ${t.value} | ${t.target} | ${t.aa ?? 'n/a'} | ${verdict(t)} |`);
  lines.push('');
  lines.push(
    `Sift peak RSS over the whole run: ${f1(siftPeakRssMb)} MB. Total time: ${Math.floor(totalS / 60)} min ${Math.round(totalS % 60)} s.`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);

  const written = writeRunFigures(path.join(root, 'bench', 'results'), {
    at: startedAt,
    full: ONLY.size === 0,
    markdown: lines.join('\n'),
    json: {
      at: startedAt.toISOString(),
      commit,
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        node: process.version,
        loadavg: { start: loadAtStart, end: os.loadavg() },
      },
      settings: {
        durationS: DURATION,
        warmupS: WARMUP,
        endpointDurationS: ENDPOINT_DURATION,
        endpointWarmupS: ENDPOINT_WARMUP,
        untargetedDurationS: UNTARGETED_DURATION,
        untargetedWarmupS: UNTARGETED_WARMUP,
        roundDurationS: ROUND_DURATION,
        metricsRoundDurationS: METRICS_ROUND_DURATION,
        metricsRounds: METRICS_ROUNDS,
        workersPairs: WORKERS_PAIRS,
        roundWarmupS: ROUND_WARMUP,
        mixDurationS: MIX_DURATION,
        mixConnections: MIX_CONNECTIONS,
        mix: Object.fromEntries(ENDPOINTS.map((e) => [e.name, e.mix])),
        latencyMs: LATENCY,
        keys: KEYS,
        database: EXTERNAL_DB ? 'external' : 'embedded',
        only: [...ONLY],
      },
      ...results,
      targets,
      totalS,
    },
  });
  log(`figures written to ${written.map((f) => path.relative(root, f)).join(', ')}`);
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
