import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { parseProviderLimits } from '../../src/config/provider-limits.js';
import { limitsOfWindows, rateLimitWindows } from '../../src/providers/rate-limit-headers.js';
import type { BudgetCrossing } from '../../src/upstream/pacing/pacer.js';
import { pacingPlan } from '../../src/upstream/pacing/plan.js';
import { HttpFailure } from '../../src/upstream/http.js';
import { descriptorOf } from '../../src/providers/registry.js';
import { unresponsiveOf } from '../../src/upstream/runner.js';
import { createProviderServices, type ProviderServices } from '../../src/upstream/services.js';
import type { ProviderCall } from '../../src/providers/types.js';
import { type BraveFake, startBraveFake } from '../fakes/brave.js';
import { type FakeServer, startFakeServer } from '../fakes/fake-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startDbProxy } from '../helpers/db-proxy.js';
import { createPool } from '../../src/db/pool.js';

/*
 * Pacing and budgets (src/upstream/pacing/): slots taken from the database by
 * every call of a paced provider, against real Postgres and real HTTP fakes.
 * Arrival gaps are asserted only from below (a paced call is never early).
 */

let db: TestDatabase;
let fake: FakeServer;

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startFakeServer({ '/rows': (req) => ({ body: { rows: [req.query.get('q')] } }) });
});
afterAll(async () => {
  await fake?.close();
  await db?.drop();
});
beforeEach(async () => {
  fake.requests.length = 0;
  await db.pool.query('TRUNCATE provider_pacing, provider_call_leases, provider_budget_usage');
});

const rows = (b: unknown) => (b as { rows: unknown[] }).rows;
const call = (q: string): ProviderCall<unknown[]> => ({
  provider: 'provider_06',
  request: { url: `${fake.url}/rows?q=${q}` },
  parse: rows,
});

function services(
  env: Record<string, string>,
  onBudgetCrossed?: (c: BudgetCrossing) => void,
  pool: pg.Pool = db.pool,
): ProviderServices {
  const config = parseConfig({ DATABASE_URL: db.url, SEPIA_BASE_URL: fake.url, LOG_LEVEL: 'silent', ...env });
  return createProviderServices(config, pool, { onBudgetCrossed });
}

describe('PROVIDER_LIMITS', () => {
  it('reads rates, concurrency and budgets per provider, and off to lift a default', () => {
    const parsed = parseProviderLimits(
      'provider_01 rate=1/s month=2000; provider_13 rate=off\nprovider_12 day=300,concurrency=2',
    );
    expect(parsed).toEqual({
      provider_01: { rate: { limit: 1, windowSeconds: 1, text: '1/s' }, month: 2000 },
      provider_13: { rate: null },
      provider_12: { day: 300, concurrency: 2 },
    });
  });

  it('refuses what it cannot read, naming the entry', () => {
    expect(parseProviderLimits('brave rate=1/s')).toMatch(/"brave" is not a provider slug/);
    expect(parseProviderLimits('provider_01 speed=3')).toMatch(/provider_01: "speed=3" is not one of/);
    expect(parseProviderLimits('provider_01 month=0')).toMatch(/positive integer/);
    expect(parseProviderLimits('provider_01 month=1 day=1')).toMatch(/month or day/);
    expect(() => parseConfig({ PROVIDER_LIMITS: 'provider_01 rate=fast' })).toThrow(/PROVIDER_LIMITS/);
  });

  it("applies an upstream's published terms only on its own host", () => {
    const nominatim = descriptorOf('provider_13');
    const pub = pacingPlan(nominatim, parseConfig({}), 6000);
    expect(pub.intervalMs).toBe(1000);
    expect(pub.source).toBe('https://operations.osmfoundation.org/policies/nominatim/');
    const own = pacingPlan(nominatim, parseConfig({ NOMINATIM_BASE_URL: 'http://127.0.0.1:9' }), 6000);
    expect(own.intervalMs).toBeNull();
    const lifted = pacingPlan(nominatim, parseConfig({ PROVIDER_LIMITS: 'provider_13 rate=off' }), 6000);
    expect(lifted.intervalMs).toBeNull();
    const se = descriptorOf('provider_12');
    // A user's searches may spend 10 % of a budget by default.
    expect(pacingPlan(se, parseConfig({}), 8000).budget).toEqual({ period: 'day', calls: 300, perUser: 30 });
    expect(pacingPlan(se, parseConfig({ STACKEXCHANGE_API_KEY: 'k' }), 8000).budget).toEqual({
      period: 'day',
      calls: 10_000,
      perUser: 1000,
    });
  });
});

describe("Brave's rate-limit headers", () => {
  it('read as a per-second rate and a monthly count', () => {
    const headers = {
      'x-ratelimit-limit': '1, 15000',
      'x-ratelimit-policy': '1;w=1, 15000;w=2592000',
      'x-ratelimit-remaining': '0, 1000',
      'x-ratelimit-reset': '1, 1419704',
    };
    expect(descriptorOf('provider_01').limitsReport!.read(headers)).toEqual({
      rate: { limit: 1, windowSeconds: 1, remaining: 0, resetSeconds: 1 },
      period: { limit: 15000, remaining: 1000, resetSeconds: 1419704 },
    });
    expect(limitsOfWindows(rateLimitWindows({ 'x-ratelimit-limit': 'x' }, [1]))).toBeNull();
  });
});

describe('the shared pacer', () => {
  it('spaces the calls of a paced provider and lets those without a slot in time sit out, unrecorded', async () => {
    const s = services({ PROVIDER_LIMITS: 'provider_06 rate=4/s' });
    try {
      // Six at once, each may wait half of a 1 s deadline: slots 250 ms apart and a margin (plan.ts),
      // so those at 0 and 287.5 ms fit, the rest do not (a call too late for its slot takes a later
      // one, which may not fit).
      const out = await s.runner.gather(
        ['a', 'b', 'c', 'd', 'e', 'f'].map((q) => call(q)),
        { deadlineMs: 1000 },
      );
      const served = out.filter((o) => o.ok);
      expect(served.length).toBeGreaterThanOrEqual(1);
      expect(served.length).toBeLessThanOrEqual(2);
      const sat = unresponsiveOf(out);
      expect(sat.length).toBe(6 - served.length);
      expect(sat.every((u) => u.reason === 'rate_limited')).toBe(true);
      expect(fake.requests).toHaveLength(served.length);
      await s.recorder.flush();
      const { rows: status } = await db.pool.query('SELECT ok FROM provider_status WHERE provider = $1', [
        'provider_06',
      ]);
      expect(status).toEqual([{ ok: true }]);
    } finally {
      await s.close();
    }
  });

  it('keeps the rate across two sets of services on one database', async () => {
    const a = services({ PROVIDER_LIMITS: 'provider_06 rate=5/s' });
    const b = services({ PROVIDER_LIMITS: 'provider_06 rate=5/s' });
    const arrivals: number[] = [];
    try {
      const started = performance.now();
      await Promise.all(
        [a, b, a, b, a, b].map((s, i) =>
          s.runner.callAs(call(`x${i}`), 'probe').then(() => arrivals.push(performance.now() - started)),
        ),
      );
      arrivals.sort((x, y) => x - y);
      expect(fake.requests).toHaveLength(6);
      // Six calls at 5 a second: the last one cannot start before a second has passed.
      expect(arrivals[5]!).toBeGreaterThanOrEqual(950);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('spends a budget exactly, says so at 80 % and 100 % once, and then sits the provider out', async () => {
    const crossings: BudgetCrossing[] = [];
    const s = services({ PROVIDER_LIMITS: 'provider_06 day=5' }, (c) => crossings.push(c));
    try {
      const out = await s.runner.gather(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((q) => call(q)));
      expect(out.filter((o) => o.ok)).toHaveLength(5);
      expect(unresponsiveOf(out)).toEqual([
        { engine: 'provider_06', reason: 'budget_exhausted' },
        { engine: 'provider_06', reason: 'budget_exhausted' },
      ]);
      expect(fake.requests).toHaveLength(5);
      // The statements finish in any order; each share is crossed by exactly one call.
      const shares = crossings.map((c) => [c.percent, c.calls, c.budget, c.period]);
      expect(shares.sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual([
        [80, 4, 5, 'day'],
        [100, 5, 5, 'day'],
      ]);
    } finally {
      await s.close();
    }
  });

  it('gives back the lease, budget unit and slot of a wait its request gave up: the next call gets them at once', async () => {
    // concurrency=1: a wait that kept its lease would block the provider for everyone until it expired.
    const s = services({ PROVIDER_LIMITS: 'provider_06 rate=2/s concurrency=1 day=10' });
    try {
      await s.runner.callAs(call('first'), 'query');
      // The next slot is half a second away: this call waits for it, holding the only lease, until its request gives up.
      const gaveUp = new AbortController();
      const waiting = s.runner.callAs(call('abandoned'), 'query', gaveUp.signal);
      gaveUp.abort(new HttpFailure('timeout', 'request deadline'));
      await expect(waiting).rejects.toThrow('request deadline');
      const { rows: held } = await db.pool.query(
        `SELECT (SELECT count(*) FROM provider_call_leases) AS leases,
                (SELECT calls FROM provider_budget_usage WHERE provider = 'provider_06') AS calls`,
      );
      expect(held[0]).toEqual({ leases: '0', calls: '1' });
      // A probe may wait up to its whole timeout, yet less than a kept lease would have held the provider.
      await expect(s.runner.callAs(call('next'), 'probe')).resolves.toEqual(['next']);
      expect(fake.requests.map((r) => r.query.get('q'))).toEqual(['first', 'next']);
    } finally {
      await s.close();
    }
  });

  it('announces a share of the budget once even when the call that crossed it gave its unit back', async () => {
    const crossings: BudgetCrossing[] = [];
    const s = services({ PROVIDER_LIMITS: 'provider_06 rate=2/s day=5' }, (c) => crossings.push(c));
    try {
      for (const q of ['a', 'b', 'c']) await s.runner.callAs(call(q), 'probe');
      // The fourth call takes 80 % and waits for its slot; its request gives up, and the unit goes back.
      const gaveUp = new AbortController();
      const waiting = s.runner.callAs(call('d'), 'query', gaveUp.signal);
      gaveUp.abort(new HttpFailure('timeout', 'request deadline'));
      await expect(waiting).rejects.toThrow('request deadline');
      await s.runner.callAs(call('e'), 'probe');
      expect(crossings.map((c) => [c.percent, c.calls])).toEqual([[80, 4]]);
      const { rows } = await db.pool.query("SELECT calls FROM provider_budget_usage WHERE provider = 'provider_06'");
      expect(rows).toEqual([{ calls: '4' }]);
    } finally {
      await s.close();
    }
  });

  it('lets a call waiting for a concurrency slot go as soon as another process frees it', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const slow = await startFakeServer({
      '/rows': async (req) => {
        if (req.query.get('q') === 'holder') await gate;
        return { body: { rows: [req.query.get('q')] } };
      },
    });
    const env = {
      DATABASE_URL: db.url,
      SEPIA_BASE_URL: slow.url,
      PROVIDER_LIMITS: 'provider_06 concurrency=1',
      LOG_LEVEL: 'silent',
    };
    const a = createProviderServices(parseConfig(env), db.pool);
    const b = createProviderServices(parseConfig(env), db.pool);
    const at = (q: string) => ({ ...call(q), request: { url: `${slow.url}/rows?q=${q}` } });
    try {
      const holder = a.runner.callAs(at('holder'), 'probe');
      while (slow.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
      // b waits for the only lease; a frees it; b's call is then made, long before the lease would expire.
      const waiter = b.runner.callAs(at('waiter'), 'probe');
      await new Promise((r) => setTimeout(r, 100));
      expect(slow.requests.map((r) => r.query.get('q'))).toEqual(['holder']);
      release();
      await expect(holder).resolves.toEqual(['holder']);
      await expect(waiter).resolves.toEqual(['waiter']);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await slow.close();
    }
  });

  it('holds at most the configured number of calls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = await startFakeServer({
      '/rows': async (req) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 100));
        inFlight--;
        return { body: { rows: [req.query.get('q')] } };
      },
    });
    const config = parseConfig({
      DATABASE_URL: db.url,
      SEPIA_BASE_URL: slow.url,
      PROVIDER_LIMITS: 'provider_06 concurrency=2',
      LOG_LEVEL: 'silent',
    });
    const s = createProviderServices(config, db.pool);
    try {
      const tasks = ['a', 'b', 'c', 'd', 'e'].map((q) => ({ ...call(q), request: { url: `${slow.url}/rows?q=${q}` } }));
      const out = await Promise.all(tasks.map((t) => s.runner.callAs(t, 'probe')));
      expect(out).toHaveLength(5);
      expect(most).toBe(2);
    } finally {
      await s.close();
      await slow.close();
    }
  });
});

describe('a provider that reports its limits', () => {
  let brave: BraveFake;
  beforeAll(async () => {
    brave = await startBraveFake({ plan: { perSecond: 1, perMonth: 15000 } });
  });
  afterAll(async () => brave?.close());

  it("is paced by what it reports, so a free plan's key never meets a 429", async () => {
    const s = services({ BRAVE_API_KEY: brave.key, BRAVE_BASE_URL: brave.baseUrl });
    try {
      const braveCall = (q: string): ProviderCall<unknown> => ({
        provider: 'provider_01',
        request: { url: `${brave.baseUrl}/web/search?q=${q}`, headers: { 'X-Subscription-Token': brave.key } },
        parse: (b) => b,
      });
      // The first answer tells the plan (on Brave's own host its free plan's rate applies until then).
      expect(unresponsiveOf(await s.runner.gather([braveCall('first')]))).toEqual([]);
      const rounds = [];
      for (let round = 0; round < 3; round++) {
        rounds.push(
          await s.runner.gather(
            ['a', 'b', 'c', 'd'].map((q) => braveCall(`${q}${round}`)),
            { deadlineMs: 3000 },
          ),
        );
      }
      const all = rounds.flat();
      expect(brave.overLimit).toBe(0);
      expect(all.filter((o) => o.ok).length).toBeGreaterThanOrEqual(3);
      expect(unresponsiveOf(all).every((u) => u.reason === 'rate_limited')).toBe(true);
      await s.pacer.settled();
      const { rows: stored } = await db.pool.query(
        'SELECT reported_interval > 1000 AS paced, period_limit, period_remaining FROM provider_pacing WHERE provider = $1',
        ['provider_01'],
      );
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ paced: true, period_limit: '15000' });
    } finally {
      await s.close();
    }
  });

  it('stores the first answer that shows the plan before the answer returns, so no process calls unpaced after it', async () => {
    // Off Brave's host nothing paces Brave until an answer tells its plan. This process's
    // statements take 300 ms to reach the database: had its first answer's report been written
    // behind the answer, the other process's call would leave at once, inside Brave's second.
    const plan = await startBraveFake({ plan: { perSecond: 1, perMonth: 15000 } });
    const proxy = await startDbProxy(db.url);
    const slowPool = createPool(proxy.url, { max: 4 });
    const env = { BRAVE_API_KEY: plan.key, BRAVE_BASE_URL: plan.baseUrl };
    const slow = services(env, undefined, slowPool);
    const other = services(env);
    const braveCall = (q: string): ProviderCall<unknown> => ({
      provider: 'provider_01',
      request: { url: `${plan.baseUrl}/web/search?q=${q}`, headers: { 'X-Subscription-Token': plan.key } },
      parse: (b) => b,
    });
    try {
      proxy.setDelay(300);
      expect(unresponsiveOf(await slow.runner.gather([braveCall('first')]))).toEqual([]);
      const next = await other.runner.gather([braveCall('next')], { deadlineMs: 3000 });
      expect(plan.overLimit).toBe(0);
      // It waited for Brave's next second (or sat out when none came in time), never a 429.
      expect(unresponsiveOf(next).every((u) => u.reason === 'rate_limited')).toBe(true);
    } finally {
      await Promise.all([slow.close(), other.close()]);
      await slowPool.end();
      await proxy.close();
      await plan.close();
    }
  });
});

describe('what the pacer says limits a provider (the shared cache always serves those)', () => {
  it('a configured rate or budget always; a provider that reports its limits until an answer shows room', async () => {
    const plain = await startBraveFake();
    const free = await startBraveFake({ plan: { perSecond: 1, perMonth: 15000 } });
    const braveCall = (fake: BraveFake): ProviderCall<unknown> => ({
      provider: 'provider_01',
      request: { url: `${fake.baseUrl}/web/search?q=room`, headers: { 'X-Subscription-Token': fake.key } },
      parse: (b) => b,
    });
    const roomy = services({ BRAVE_API_KEY: plain.key, BRAVE_BASE_URL: plain.baseUrl });
    const limited = services({ BRAVE_API_KEY: free.key, BRAVE_BASE_URL: free.baseUrl });
    const configured = services({ PROVIDER_LIMITS: 'provider_06 rate=5/s' });
    try {
      expect(roomy.pacer.limits('provider_01')).toBe(true); // nothing known yet
      expect(unresponsiveOf(await roomy.runner.gather([braveCall(plain)]))).toEqual([]);
      expect(roomy.pacer.limits('provider_01')).toBe(false); // its answer reported no limit
      expect(unresponsiveOf(await limited.runner.gather([braveCall(free)]))).toEqual([]);
      expect(limited.pacer.limits('provider_01')).toBe(true); // one a second
      expect(roomy.pacer.limits('provider_06')).toBe(false);
      expect(configured.pacer.limits('provider_06')).toBe(true);
    } finally {
      await Promise.all([roomy.close(), limited.close(), configured.close()]);
      await Promise.all([plain.close(), free.close()]);
    }
  });
});

describe('budgets on show', () => {
  it('in the status API, on the status page text and in /metrics, the same for every instance', async () => {
    const { buildTestApp } = await import('../helpers/app.js');
    const { createUser } = await import('../../src/auth/users.js');
    const { issueApiKey } = await import('../../src/auth/api-keys.js');
    const { limitsText } = await import('../../src/upstream/status-view.js');
    const env = { SEPIA_BASE_URL: fake.url, PROVIDER_LIMITS: 'provider_06 month=10', METRICS_ENABLED: 'true' };
    const a = await buildTestApp(db, env);
    const b = await buildTestApp(db, env);
    try {
      const user = await createUser(db.pool, { username: `budget${Date.now()}` });
      const { key } = await issueApiKey(db.pool, user.id);
      await Promise.all([a, b, a].map((t, i) => t.app.upstream.call(call(`shown${i}`))));
      const res = await b.app.inject({ url: '/api/v1/status/', headers: { authorization: `Api-Key ${key}` } });
      expect(res.statusCode).toBe(200);
      const sepia = res.json().providers.find((p: { slug: string }) => p.slug === 'provider_06');
      expect(sepia.limits).toMatchObject({
        rate_per_second: null,
        concurrency: null,
        budget: { period: 'month', limit: 10, used: 3 },
        upstream: null,
        terms: '',
      });
      expect(Date.parse(sepia.limits.budget.resets_at)).toBeGreaterThan(Date.now());
      // A provider nothing limits carries no limits field (Wikipedia has no published hard terms).
      const wikipedia = res.json().providers.find((p: { slug: string }) => p.slug === 'provider_08');
      expect(wikipedia).toBeDefined();
      expect('limits' in wikipedia).toBe(false);

      const views = await a.app.health.limits();
      expect(limitsText(views.get('provider_06'))).toBe('Budget: 3 of 10 calls this month (30 %) · at most 1 per user');

      const metrics = await a.app.inject({ url: '/metrics' });
      expect(metrics.body).toContain('sift_provider_budget_calls{provider="provider_06",period="month",kind="used"} 3');
      expect(metrics.body).toContain(
        'sift_provider_budget_calls{provider="provider_06",period="month",kind="limit"} 10',
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('budget alerts', () => {
  it("go out once at 80 % and once at 100 %, whichever instance made the calls, in the webhook's format", async () => {
    const { buildTestApp } = await import('../helpers/app.js');
    const { startWebhookReceiver } = await import('../fakes/webhook-receiver.js');
    const receiver = await startWebhookReceiver();
    const slack = await startWebhookReceiver();
    const env = {
      SEPIA_BASE_URL: fake.url,
      PROVIDER_LIMITS: 'provider_06 day=5',
      ALERT_WEBHOOK_URLS: `${receiver.origin}/hook, ${slack.origin}/hook#format=slack`,
      ALERT_DIGEST_WINDOW_MS: '50',
    };
    const a = await buildTestApp(db, env);
    const b = await buildTestApp(db, env);
    try {
      await db.pool.query('DELETE FROM alert_outbox');
      for (const [i, t] of [a, b, a, b, a, b].entries()) await t.app.upstream.call(call(`alert${i}`)).catch(() => {});
      const deadline = Date.now() + 10_000;
      while ((receiver.received.length < 2 || slack.received.length < 2) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const notices = receiver.received.map((r) => r.body).sort((x, y) => Number(x.percent) - Number(y.percent));
      expect(notices.map((n) => [n.event, n.slug, n.percent, n.calls, n.budget, n.period])).toEqual([
        ['provider_budget', 'provider_06', 80, 4, 5, 'day'],
        ['provider_budget', 'provider_06', 100, 5, 5, 'day'],
      ]);
      expect(notices[1]!.text).toMatch(/has spent its daily budget \(5 of 5 calls\)/);
      expect(slack.received.map((r) => Object.keys(r.body))).toEqual([['text'], ['text']]);
      // Nothing more is sent for the same shares.
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(2);
    } finally {
      await Promise.all([a.close(), b.close(), receiver.close(), slack.close()]);
    }
  });
});
