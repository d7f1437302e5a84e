/*
 * The quota section of `npm run bench` (BENCH_ONLY=quota; also runs alone:
 * `node --import tsx bench/quota.ts`, after `npm run build`). What an
 * operator's upstream quotas pay, not what the CPU does:
 *
 * 1. A duplicate-heavy mix: web searches drawn from a Zipf distribution over
 *    1,000 distinct queries (the same seeded sequence each time), served by
 *    one process, by WORKERS=2, and by two instances on one database. The
 *    figure is upstream calls per 1,000 searches; the target: WORKERS=2 and
 *    two instances at most 1.05x one process.
 * 2. Brave's free plan: its fake answers with the plan's X-RateLimit-*
 *    headers and a 429 for a second call within a second. After one search
 *    (whose answer tells the plan), 20 clients search for BENCH_QUOTA_SECONDS
 *    (30): the targets are no 429 at all and every search answered (Brave in
 *    `unresponsive` when it had no slot).
 *
 * Prints the report's lines, then one JSON line of the figures (run.ts reads it).
 * Options: BENCH_QUOTA_SEARCHES (3000), BENCH_QUOTA_CONCURRENCY (32),
 * BENCH_QUOTA_SECONDS (30), BENCH_LATENCY_MS (20 here), DATABASE_URL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { issueApiKey } from '../src/auth/api-keys.js';
import { createUser } from '../src/auth/users.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createPool } from '../src/db/pool.js';
import { startAllFakes } from '../test/fakes/all.js';
import { startBraveFake } from '../test/fakes/brave.js';
import type { FakeServer } from '../test/fakes/fake-server.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SEARCHES = num('BENCH_QUOTA_SEARCHES', 3000);
const CONCURRENCY = num('BENCH_QUOTA_CONCURRENCY', 32);
const FREE_PLAN_SECONDS = num('BENCH_QUOTA_SECONDS', 30);
const LATENCY = num('BENCH_LATENCY_MS', 20);
const DISTINCT = 1000;

/** A seeded generator (mulberry32): the same sequence of queries for every configuration. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` query ranks from Zipf(s = 1) over `distinct` queries. */
export function zipfSequence(count: number, distinct: number, seed = 42): number[] {
  const weights = Array.from({ length: distinct }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w / total));
  const random = seeded(seed);
  return Array.from({ length: count }, () => {
    const r = random();
    let lo = 0;
    let hi = distinct - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

interface Instance {
  child: ChildProcess;
  url: string;
}

async function startSift(env: NodeJS.ProcessEnv): Promise<Instance> {
  const port = await freePort();
  const child = spawn('sh', ['bin/sift-server'], {
    cwd: root,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const until = performance.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('Sift exited at start');
    // Every worker up: the API answers 401 without a key only once a worker serves it.
    const status = await fetch(`${url}/api/v1/`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 401) return { child, url };
    if (performance.now() > until) throw new Error('Sift did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopAll(instances: Instance[]): Promise<void> {
  await Promise.all(
    instances.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.child.exitCode !== null) return resolve();
          s.child.once('exit', () => resolve());
          s.child.kill('SIGTERM');
        }),
    ),
  );
}

/** Runs the tasks with at most `concurrency` at once. */
async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function main() {
  const work = mkdtempSync(path.join(os.tmpdir(), 'sift-bench-quota-'));
  const external = process.env.DATABASE_URL ?? '';
  const pgsql = external ? null : await startEmbeddedPostgres({ dataDir: path.join(work, 'data') });
  const databaseUrl = external || pgsql!.url;
  const fakes = await startAllFakes({ latencyMs: LATENCY });
  const freePlan = await startBraveFake({ latencyMs: LATENCY, plan: { perSecond: 1, perMonth: 15_000 } });
  const engines: FakeServer[] = [fakes.web.brave, fakes.web.mojeek, fakes.web.marginalia, fakes.web.staan];
  const webCalls = () => engines.reduce((n, f) => n + f.requests.length, 0);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...fakes.env,
    DATABASE_URL: databaseUrl,
    DATA_DIR: path.join(work, 'data'),
    LOG_LEVEL: 'warn',
    PROBE_INTERVAL_SECONDS: '0',
    API_THROTTLE_BURST: '100000000/min',
    API_THROTTLE_SUSTAINED: '1000000000/day',
  };
  const pool = createPool(databaseUrl);
  const lines: string[] = [];
  const figures: Record<string, unknown> = {};
  const instances: Instance[] = [];
  try {
    // The schema comes with the first start.
    instances.push(await startSift({ ...env, WORKERS: '1' }));
    await stopAll(instances.splice(0));
    const user = await createUser(pool, { username: `quota${Date.now()}` });
    const { key } = await issueApiKey(pool, user.id);
    const headers = { authorization: `Api-Key ${key}` };

    const sequence = zipfSequence(SEARCHES, DISTINCT);
    const distinctSeen = new Set(sequence).size;
    lines.push(
      `Duplicate-heavy mix: ${SEARCHES} web searches, Zipf(1) over ${DISTINCT} queries (${distinctSeen} distinct in the sequence), ${CONCURRENCY} at a time.`,
      '',
      '| Served by | Upstream calls | Per 1,000 searches | Against one process |',
      '|---|---|---|---|',
    );
    const configurations: { name: string; workers: string; instances: number }[] = [
      { name: 'one process', workers: '1', instances: 1 },
      { name: 'WORKERS=2', workers: '2', instances: 1 },
      { name: 'two instances, one database', workers: '1', instances: 2 },
    ];
    let baseline = 0;
    const perConfiguration: Record<string, unknown>[] = [];
    for (const c of configurations) {
      await pool.query('TRUNCATE upstream_cache, upstream_flights');
      for (let i = 0; i < c.instances; i++) instances.push(await startSift({ ...env, WORKERS: c.workers }));
      // Instances find each other by the membership each renews every 2 s (src/upstream/shared-cache.ts).
      if (c.instances > 1) await new Promise((r) => setTimeout(r, 2500));
      const before = webCalls();
      let failed = 0;
      await inParallel(sequence.length, CONCURRENCY, async (i) => {
        const target = instances[i % instances.length]!;
        const res = await fetch(`${target.url}/api/v1/web/?q=${encodeURIComponent(`zipf query ${sequence[i]}`)}`, {
          headers,
        });
        await res.arrayBuffer();
        if (res.status !== 200) failed++;
      });
      const calls = webCalls() - before;
      await stopAll(instances.splice(0));
      if (c.name === 'one process') baseline = calls;
      const ratio = baseline ? calls / baseline : 1;
      const per1000 = (calls / SEARCHES) * 1000;
      perConfiguration.push({ name: c.name, calls, per1000, ratio, failed });
      lines.push(`| ${c.name} | ${calls} | ${per1000.toFixed(1)} | ${ratio.toFixed(3)}x |`);
    }
    figures.zipf = { searches: SEARCHES, distinct: DISTINCT, configurations: perConfiguration };
    lines.push('', 'Target: WORKERS=2 and two instances at most 1.05x one process.', '');

    // Brave's free plan, one request a second, default workers.
    await pool.query('TRUNCATE upstream_cache, upstream_flights');
    await pool.query("DELETE FROM provider_pacing WHERE provider = 'provider_01'");
    const planEnv = { ...env, BRAVE_BASE_URL: freePlan.baseUrl, BRAVE_API_KEY: freePlan.key, WORKERS: '2' };
    instances.push(await startSift(planEnv));
    const sift = instances[0]!;
    const search = async (q: string) => {
      const res = await fetch(`${sift.url}/api/v1/web/?q=${encodeURIComponent(q)}`, { headers });
      const body = (await res.json()) as {
        results?: { engines?: string[] }[];
        unresponsive?: { engine: string; reason: string }[];
      };
      return { status: res.status, body };
    };
    await search('free plan first search');
    const overBefore = freePlan.overLimit;
    const braveBefore = freePlan.requestsTo('web').length;
    let searches = 0;
    let notAnswered = 0;
    let braveSatOut = 0;
    const reasons = new Map<string, number>();
    const until = performance.now() + FREE_PLAN_SECONDS * 1000;
    let n = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (performance.now() < until) {
          const { status, body } = await search(`free plan ${n++}`);
          searches++;
          if (status !== 200) notAnswered++;
          const brave = body.unresponsive?.find((u) => u.engine === 'provider_01');
          if (brave) {
            braveSatOut++;
            reasons.set(brave.reason, (reasons.get(brave.reason) ?? 0) + 1);
          }
        }
      }),
    );
    await stopAll(instances.splice(0));
    const braveCalls = freePlan.requestsTo('web').length - braveBefore;
    const tooMany = freePlan.overLimit - overBefore;
    figures.freePlan = {
      seconds: FREE_PLAN_SECONDS,
      clients: 20,
      searches,
      notAnswered,
      braveCalls,
      upstream429s: tooMany,
      braveSatOut,
      reasons: Object.fromEntries(reasons),
    };
    lines.push(
      `Brave's free plan (1 request a second, its fake sending the plan's headers), WORKERS=2, 20 clients for ${FREE_PLAN_SECONDS} s: ${searches} searches, ${notAnswered} not answered 200; Brave called ${braveCalls} times (${(braveCalls / FREE_PLAN_SECONDS).toFixed(2)} a second), ${tooMany} upstream 429s; Brave sat ${braveSatOut} searches out (${[...reasons].map(([r, c]) => `${r}: ${c}`).join(', ') || 'none'}).`,
      'Targets: 0 upstream 429s, every search answered.',
    );
  } finally {
    await stopAll(instances);
    await pool.end();
    await Promise.all([fakes.close(), freePlan.close()]);
    await pgsql?.stop();
    rmSync(work, { recursive: true, force: true });
  }
  for (const l of lines) process.stdout.write(`${l}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
