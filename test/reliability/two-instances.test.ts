import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';
import { type AllFakes, startAllFakes } from '../fakes/all.js';

/*
 * Issue 17, item 6: two Sift instances (each its own pool) and one Postgres,
 * under concurrent load on loopback for a bounded time, real HTTP. Several
 * keys (two of them one user's) hammer both instances at once with a mix of
 * endpoints; Marginalia fails throughout (an engine down while the others
 * answer). Then:
 * - no 5xx, every answer a 200 or a 429;
 * - admitted requests per key exactly the limit, across both instances:
 *   the burst limit in one run, the sustained limit in another;
 * - usage_monthly per user exactly the searches its 200s count;
 * - after both flush, provider_status and both instances' health
 *   endpoints agree (Marginalia down, the others up).
 */

const LOAD_MS = 2500;
/** Requests in flight per key (spread over both instances). */
const CONCURRENCY_PER_KEY = 5;
const TIMEOUT_MS = '2000';

interface Endpoint {
  path: (i: number) => string;
  /** Monthly searches a 200 counts. */
  units: number;
}

/** The mix every client sends, in turn. */
const ENDPOINTS: Endpoint[] = [
  { path: (i) => `/api/v1/web/?engine=provider_02&q=load+${i % 7}`, units: 1 },
  { path: (i) => `/api/v1/web/?q=load+${i % 5}`, units: 4 },
  { path: (i) => `/api/v1/images/?q=load+${i % 3}`, units: 1 },
  { path: () => '/api/v1/key/', units: 0 },
  { path: (i) => `/api/v1/suggest/?q=lo${i % 4}`, units: 1 },
  { path: (i) => `/api/v1/instant/?q=${i % 9}%2B${i % 4}`, units: 1 },
  { path: () => '/api/v1/status/', units: 0 },
  { path: (i) => `/api/v1/news/?q=load+${i % 3}`, units: 1 },
];

let db: TestDatabase;
let fakes: AllFakes;

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startAllFakes();
  // An engine that fails throughout: the instances must agree it is down.
  fakes.web.marginalia.setMode({ kind: 'status', status: 500, body: 'upstream exploded' });
});

afterAll(async () => {
  await fakes?.close();
  await db?.drop();
});

interface KeyLoad {
  key: string;
  userId: number;
  statuses: Map<number, number>;
  /** Monthly searches the key's 200s count. */
  units: number;
  sent: number;
  /** Admitted (not 429) per instance. */
  admittedBy: number[];
}

/** Two instances with these limits, listening on loopback; `run` gets their base URLs. */
async function withTwoInstances<T>(
  limits: { API_THROTTLE_BURST: string; API_THROTTLE_SUSTAINED: string },
  run: (instances: { app: TestApp; base: string }[]) => Promise<T>,
): Promise<T> {
  const env = { ...fakes.env, ...limits, PROVIDER_TIMEOUT_MS: TIMEOUT_MS };
  const apps = await Promise.all([buildTestApp(db, env), buildTestApp(db, env)]);
  try {
    const bases = await Promise.all(apps.map((t) => listen(t.app)));
    return await run(apps.map((app, i) => ({ app, base: bases[i]! })));
  } finally {
    await Promise.all(apps.map((t) => t.close()));
  }
}

/** Users with keys: `perUser[i]` keys for user i. */
async function keysFor(tag: string, perUser: number[]): Promise<KeyLoad[]> {
  const out: KeyLoad[] = [];
  for (const [u, n] of perUser.entries()) {
    const user = await createUser(db.pool, { username: `${tag}-${u}` });
    for (let k = 0; k < n; k++) {
      out.push({
        key: (await issueApiKey(db.pool, user.id)).key,
        userId: user.id,
        statuses: new Map(),
        units: 0,
        sent: 0,
        admittedBy: [0, 0],
      });
    }
  }
  return out;
}

/** Every key sends CONCURRENCY_PER_KEY requests at a time, alternating instances, for LOAD_MS. */
/**
 * Sends each key's requests for LOAD_MS, and on until every key has sent at least `minimum`: the
 * checks below need that many whatever the machine's speed.
 */
async function load(bases: string[], keys: KeyLoad[], minimum: number): Promise<void> {
  const until = Date.now() + LOAD_MS;
  let n = 0;
  const client = async (k: KeyLoad, lane: number) => {
    for (let i = lane; Date.now() < until || k.sent < minimum; i += CONCURRENCY_PER_KEY) {
      const endpoint = ENDPOINTS[i % ENDPOINTS.length]!;
      const instance = n++ % bases.length;
      const res = await fetch(bases[instance]! + endpoint.path(i), { headers: { authorization: `Api-Key ${k.key}` } });
      await res.arrayBuffer();
      k.sent++;
      k.statuses.set(res.status, (k.statuses.get(res.status) ?? 0) + 1);
      if (res.status !== 429) k.admittedBy[instance]!++;
      if (res.status === 200) k.units += endpoint.units;
    }
  };
  await Promise.all(keys.flatMap((k) => Array.from({ length: CONCURRENCY_PER_KEY }, (_, lane) => client(k, lane))));
}

const admitted = (k: KeyLoad) => k.sent - (k.statuses.get(429) ?? 0);

async function expectUsageExact(instances: { app: TestApp }[], keys: KeyLoad[]) {
  await Promise.all(instances.map(({ app }) => app.app.lifecycle.flush()));
  const byUser = new Map<number, number>();
  for (const k of keys) byUser.set(k.userId, (byUser.get(k.userId) ?? 0) + k.units);
  for (const [userId, units] of byUser) {
    expect(units, `user ${userId} had searches counted`).toBeGreaterThan(0);
    expect(await monthlySearches(db.pool, userId), `usage of user ${userId}`).toBe(units);
  }
}

function report(label: string, keys: KeyLoad[]) {
  const lines = keys.map(
    (k, i) =>
      `key ${i} (user ${k.userId}): sent ${k.sent}, ${JSON.stringify(Object.fromEntries(k.statuses))}, ` +
      `admitted by instance ${k.admittedBy.join(' + ')}, searches counted ${k.units}`,
  );
  console.info(`${label}:\n  ${lines.join('\n  ')}`);
}

/** Both instances admitted some of the keys' requests (so the exact totals are shared ones). */
function expectBothAdmitted(keys: KeyLoad[]) {
  expect(keys.reduce((n, k) => n + k.admittedBy[0]!, 0)).toBeGreaterThan(0);
  expect(keys.reduce((n, k) => n + k.admittedBy[1]!, 0)).toBeGreaterThan(0);
}

describe('two instances, one database, under concurrent load', () => {
  it('answer every search (no 5xx), count usage exactly, and agree on provider health', async () => {
    const keys = await keysFor('open', [2, 1, 1]);
    await withTwoInstances(
      { API_THROTTLE_BURST: '1000000/min', API_THROTTLE_SUSTAINED: '10000000/day' },
      async (instances) => {
        await load(
          instances.map((i) => i.base),
          keys,
          26,
        );
        report('unthrottled run', keys);
        for (const [i, k] of keys.entries()) {
          expect(Object.fromEntries(k.statuses), `key ${i}`).toEqual({ 200: k.sent });
          expect(k.sent, `key ${i}`).toBeGreaterThan(25);
        }
        expectBothAdmitted(keys);
        await expectUsageExact(instances, keys);

        // Health, once both instances wrote what they observed: the same everywhere.
        await Promise.all(instances.map(({ app }) => app.app.health.recorder.flush()));
        const { rows } = await db.pool.query<{ provider: string; ok: boolean; last_error: string }>(
          'SELECT provider, ok, last_error FROM provider_status ORDER BY provider',
        );
        const byProvider = Object.fromEntries(rows.map((r) => [r.provider, r]));
        expect(byProvider.provider_03).toMatchObject({ ok: false, last_error: 'HTTP 500: upstream exploded' });
        for (const up of ['provider_01', 'provider_02', 'provider_04', 'provider_05', 'provider_07']) {
          expect(byProvider[up], up).toMatchObject({ ok: true, last_error: '' });
        }
        const [a, b] = await Promise.all(
          instances.map(async ({ base }) => {
            const res = await fetch(`${base}/status/health`);
            return { status: res.status, body: await res.json() };
          }),
        );
        expect(a).toEqual(b);
        expect(a!.status).toBe(500);
        expect(a!.body).toMatchObject({ status: 'down', down: ['provider_03'] });
        for (const { base } of instances) {
          expect((await fetch(`${base}/status/health/provider_02`)).status).toBe(200);
          expect((await fetch(`${base}/status/health/provider_03`)).status).toBe(500);
        }
      },
    );
  });

  it('admit exactly the burst limit per key across both, count usage exactly, and never answer 5xx', async () => {
    const BURST = 40;
    const keys = await keysFor('burst', [2, 1, 1]);
    await withTwoInstances(
      { API_THROTTLE_BURST: `${BURST}/min`, API_THROTTLE_SUSTAINED: '100000/day' },
      async (instances) => {
        await load(
          instances.map((i) => i.base),
          keys,
          BURST * 2 + 1,
        );
        report('burst run', keys);
        for (const [i, k] of keys.entries()) {
          expect([...k.statuses.keys()].sort(), `key ${i}`).toEqual([200, 429]);
          // The limit bound: far more were sent than admitted.
          expect(k.sent, `key ${i}`).toBeGreaterThan(BURST * 2);
          expect(admitted(k), `key ${i} admitted`).toBe(BURST);
        }
        expectBothAdmitted(keys);
        await expectUsageExact(instances, keys);
      },
    );
  });

  it('admit exactly the sustained limit per key across both when it is the lower one', async () => {
    const SUSTAINED = 30;
    const keys = await keysFor('sustained', [1, 2]);
    await withTwoInstances(
      { API_THROTTLE_BURST: '100000/min', API_THROTTLE_SUSTAINED: `${SUSTAINED}/hour` },
      async (instances) => {
        await load(
          instances.map((i) => i.base),
          keys,
          SUSTAINED + 11,
        );
        report('sustained run', keys);
        for (const [i, k] of keys.entries()) {
          expect([...k.statuses.keys()].sort(), `key ${i}`).toEqual([200, 429]);
          expect(k.sent, `key ${i}`).toBeGreaterThan(SUSTAINED + 10);
          expect(admitted(k), `key ${i} admitted`).toBe(SUSTAINED);
        }
        expectBothAdmitted(keys);
        await expectUsageExact(instances, keys);
      },
    );
  });
});
