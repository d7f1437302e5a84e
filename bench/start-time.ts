/*
 * Start-up times of one or more builds, measured alternately so that the machine's drift falls on
 * each alike: for every checkout given (default: this one), in turn, `bin/sift-server` with the
 * embedded database in a new DATA_DIR (a cold start: cluster created, migrations applied), then a
 * restart on it, both with WORKERS=auto, then a restart with WORKERS=1; each timed from the spawn
 * to the first 200 from /up (polled every 10 ms), as in `npm run bench`. Each checkout must be
 * built already (`npm run build` in it).
 *
 *   npx tsx bench/start-time.ts [checkout…]        ROUNDS=<rounds> (4)
 *
 * Prints each round and, per checkout, the median of each measure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../test/helpers/server.js';

const roots = process.argv.slice(2).map((r) => path.resolve(r));
if (roots.length === 0) roots.push(path.resolve(import.meta.dirname, '..'));
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const MEASURES = ['cold start (auto)', 'restart (auto)', 'restart (1)'] as const;

async function startAndStop(root: string, workers: string, dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn('sh', ['bin/sift-server'], {
    cwd: root,
    env: {
      ...process.env,
      WORKERS: workers,
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      PROBE_INTERVAL_SECONDS: '0',
    },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${root}: the server exited with ${child.exitCode}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/up`);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - started;
      } catch {
        /* not yet */
      }
      if (performance.now() - started > 60_000) throw new Error(`${root}: /up did not answer within 60 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const times = new Map(roots.map((r) => [r, MEASURES.map(() => [] as number[])]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const root of roots) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sift-start-'));
    try {
      const row = [
        await startAndStop(root, 'auto', dataDir),
        await startAndStop(root, 'auto', dataDir),
        await startAndStop(root, '1', dataDir),
      ];
      for (const [i, ms] of row.entries()) times.get(root)![i]!.push(ms);
      console.log(`round ${round} ${root}: ${row.map((ms, i) => `${MEASURES[i]} ${ms.toFixed(0)} ms`).join(', ')}`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
for (const [root, measures] of times)
  console.log(`median ${root}: ${measures.map((xs, i) => `${MEASURES[i]} ${median(xs).toFixed(0)} ms`).join(', ')}`);
