import { type ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { startWebFakes } from '../fakes/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';

/*
 * Limits and quota are exact at any number of processes: two instances on one database, each with
 * WORKERS=2 (four server processes), under concurrent load with one key. Each request opens its own
 * connection, so the primaries hand them to both workers in turn.
 */

interface Instance {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
  /** What the server logged (LOG_LEVEL=warn: its warnings and errors), for a failure's message. */
  logged: () => string;
}

let db: TestDatabase;
let users = 0;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

async function startInstance(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      // info: the primary's `ready` line says every worker listens (the warnings are kept for a failure's message).
      LOG_LEVEL: 'info',
      WORKERS: '2',
      PROBE_INTERVAL_SECONDS: '0',
      DATABASE_URL: db.url,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  let partial = '';
  let logged = '';
  let ready = false;
  child.stderr!.on('data', (c) => (errors += c));
  child.stdout!.on('data', (c) => {
    const lines = (partial + c).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.includes('"msg":"ready"')) ready = true;
      if (/"level":[4-6]0/.test(line)) logged = (logged + line + '\n').slice(-20_000);
    }
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited: ${errors}`);
    if (Date.now() > deadline) throw new Error(`the server did not start: ${errors}`);
    // Ready once every worker listens (a load that starts while one is still starting meets its
    // start-up's CPU) and a worker answers the key route (the primary answers nothing).
    const up = ready
      ? await fetch(`${base}/api/v1/`).then(
          (r) => r.status,
          () => 0,
        )
      : 0;
    if (up === 401) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, base, exited, logged: () => logged };
}

async function stopAll(instances: Instance[]): Promise<void> {
  for (const s of instances) if (s.child.exitCode === null) s.child.kill('SIGTERM');
  await Promise.all(instances.map((s) => s.exited));
}

async function newKey(): Promise<string> {
  const user = await createUser(db.pool, { username: `scale${++users}` });
  return (await issueApiKey(db.pool, user.id)).key;
}

/** Runs `count` tasks with at most `concurrency` at a time; their results in order. */
async function inParallel<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe('two instances of two workers each, one database', () => {
  it('admit exactly the burst limit: 20 of 200 concurrent requests of one key', { timeout: 120_000 }, async () => {
    const env = { API_THROTTLE_BURST: '20/min', API_THROTTLE_SUSTAINED: '100000/day' };
    const instances = [await startInstance(env), await startInstance(env)];
    try {
      const key = await newKey();
      const statuses = await inParallel(200, 200, async (i) => {
        const res = await fetch(`${instances[i % 2]!.base}/api/v1/`, {
          headers: { authorization: `Api-Key ${key}`, connection: 'close' },
        });
        await res.arrayBuffer();
        return res.status;
      });
      expect(tally(statuses)).toEqual({ 200: 20, 429: 180 });
    } finally {
      await stopAll(instances);
    }
  });

  it('admit exactly the monthly quota over REST and MCP, and the key shows it', { timeout: 120_000 }, async () => {
    const env = { API_THROTTLE_BURST: '100000/min', API_THROTTLE_SUSTAINED: '1000000/day', API_MONTHLY_QUOTA: '25' };
    const instances = [await startInstance(env), await startInstance(env)];
    try {
      // REST: 80 instant answers (one search each, no upstream) at 16 concurrent.
      const rest = await newKey();
      const statuses = await inParallel(80, 16, async (i) => {
        const res = await fetch(`${instances[i % 2]!.base}/api/v1/instant/?q=${i}%2B1`, {
          headers: { authorization: `Api-Key ${rest}`, connection: 'close' },
        });
        await res.arrayBuffer();
        return res.status;
      });
      expect(tally(statuses)).toEqual({ 200: 25, 429: 55 });
      for (const s of instances) {
        const shown = (await (
          await fetch(`${s.base}/api/v1/key/`, { headers: { authorization: `Api-Key ${rest}`, connection: 'close' } })
        ).json()) as { usage: { searches: number; quota: number } };
        expect(shown.usage).toMatchObject({ searches: 25, quota: 25 });
      }

      // MCP: the same through the SDK's own client, one per instance.
      const agent = await newKey();
      const clients = await Promise.all(
        instances.map(async (s) => {
          const client = new Client({ name: 'scale-test', version: '1.0.0' });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), {
              requestInit: { headers: { authorization: `Bearer ${agent}` } },
            }),
          );
          return client;
        }),
      );
      try {
        const results = await inParallel(
          80,
          16,
          async (i) =>
            (await clients[i % 2]!.callTool({
              name: 'instant_answer',
              arguments: { q: `${i}+2` },
            })) as CallToolResult,
        );
        expect(results.filter((r) => !r.isError)).toHaveLength(25);
        const refusals = results.filter((r) => r.isError);
        expect(refusals).toHaveLength(55);
        for (const r of refusals) expect(JSON.stringify(r.content)).toMatch(/quota/i);
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
      const shown = (await (
        await fetch(`${instances[0]!.base}/api/v1/key/`, { headers: { authorization: `Api-Key ${agent}` } })
      ).json()) as { usage: { searches: number } };
      expect(shown.usage.searches).toBe(25);
    } finally {
      await stopAll(instances);
    }
  });

  it('keep every answered search counted when a worker is killed outright', { timeout: 120_000 }, async () => {
    const instance = await startInstance({ API_THROTTLE_BURST: '100000/min' });
    try {
      const key = await newKey();
      const statuses = await inParallel(40, 8, async (i) => {
        const res = await fetch(`${instance.base}/api/v1/instant/?q=${i}%2B3`, {
          headers: { authorization: `Api-Key ${key}`, connection: 'close' },
        });
        await res.arrayBuffer();
        return res.status;
      });
      expect(tally(statuses)).toEqual({ 200: 40 });
      // Every process of the instance, primary included, killed without a chance to write anything.
      const { execFileSync } = await import('node:child_process');
      const pids = execFileSync('pgrep', ['-P', String(instance.child.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map(Number);
      for (const pid of [...pids, instance.child.pid!]) process.kill(pid, 'SIGKILL');
      await instance.exited;
      const { rows } = await db.pool.query<{ searches: string }>(
        `SELECT u.searches FROM usage_monthly u JOIN api_keys k ON k.user_id = u.user_id
          WHERE k.prefix = $1 AND u.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date`,
        [key.slice(7, 15)],
      );
      expect(Number(rows[0]?.searches)).toBe(40);
    } finally {
      await stopAll([instance]);
    }
  });

  it("keep a provider's pacing and budget across the four processes of both instances", {
    timeout: 120_000,
  }, async () => {
    const web = await startWebFakes();
    const env = {
      ...web.env,
      API_THROTTLE_BURST: '100000/min',
      API_THROTTLE_SUSTAINED: '1000000/day',
      // One key spends the whole budget here: no user share.
      PROVIDER_LIMITS: 'provider_02 rate=2/s; provider_03 day=7 user_share=off',
    };
    const instances = [await startInstance(env), await startInstance(env)];
    try {
      const key = await newKey();
      const started = performance.now();
      const answers = await inParallel(40, 10, async (i) => {
        const res = await fetch(`${instances[i % 2]!.base}/api/v1/web/?q=paced+${i}`, {
          headers: { authorization: `Api-Key ${key}`, connection: 'close' },
        });
        return {
          status: res.status,
          body: (await res.json()) as { unresponsive: { engine: string; reason: string }[] },
        };
      });
      const seconds = (performance.now() - started) / 1000;
      expect(
        tally(answers.map((a) => a.status)),
        `${JSON.stringify(answers.filter((a) => a.status !== 200).map((a) => a.body))}\n${instances.map((s) => s.logged()).join('\n')}`,
      ).toEqual({ 200: 40 });
      // Two calls a second at most, whichever process made them: never more than the elapsed time allows.
      const mojeek = web.mojeek.requests.filter((r) => r.query.get('q')?.startsWith('paced')).length;
      expect(mojeek).toBeGreaterThan(0);
      expect(mojeek).toBeLessThanOrEqual(Math.floor(seconds * 2) + 1);
      // The budget of seven calls is spent exactly, and the rest sat out saying why.
      const marginalia = web.marginalia.requests.filter((r) => r.query.get('query')?.startsWith('paced')).length;
      expect(marginalia).toBe(7);
      const reasons = answers.flatMap((a) => a.body.unresponsive.map((u) => `${u.engine} ${u.reason}`));
      expect(reasons.filter((r) => r === 'provider_03 budget_exhausted')).toHaveLength(33);
      expect(reasons.filter((r) => r.startsWith('provider_02')).every((r) => r === 'provider_02 rate_limited')).toBe(
        true,
      );
    } finally {
      await stopAll(instances);
      await web.close();
    }
  });

  it('keep a configured rate in every sliding window of calls from the four processes, not only on average', {
    timeout: 120_000,
  }, async () => {
    const web = await startWebFakes();
    const env = {
      ...web.env,
      API_THROTTLE_BURST: '100000/min',
      API_THROTTLE_SUSTAINED: '1000000/day',
      PROVIDER_LIMITS: 'provider_02 rate=5/s',
    };
    const instances = [await startInstance(env), await startInstance(env)];
    try {
      const key = await newKey();
      await inParallel(160, 16, async (i) => {
        const res = await fetch(`${instances[i % 2]!.base}/api/v1/web/?q=window+${i}&engine=provider_02`, {
          headers: { authorization: `Api-Key ${key}`, connection: 'close' },
        });
        await res.arrayBuffer();
      });
      const arrivals = web.mojeek.requests
        .filter((r) => r.query.get('q')?.startsWith('window'))
        .map((r) => r.at)
        .sort((x, y) => x - y);
      // Enough calls for a window of six to be judged (how many more a loaded machine lets through in
      // the run's time does not matter).
      expect(arrivals.length).toBeGreaterThanOrEqual(6);
      // Five a second in every window: any six calls in a row span a second or more.
      const spans = arrivals.slice(5).map((t, i) => t - arrivals[i]!);
      expect(Math.min(...spans)).toBeGreaterThanOrEqual(1000);
    } finally {
      await stopAll(instances);
      await web.close();
    }
  });
});
