import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseProviderLimits } from '../../src/config/provider-limits.js';
import { budgetText } from '../../src/alerts/formats.js';
import { limitsText } from '../../src/upstream/status-view.js';
import { type PixabayFake, startPixabayFake } from '../fakes/pixabay.js';
import { startWebhookReceiver } from '../fakes/webhook-receiver.js';
import { createUserWithKey } from '../helpers/auth.js';
import { buildTestApp, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Each user's share of a provider's budget (PROVIDER_LIMITS user_share): kept
 * by the pacing statement for every instance on the database, reached through
 * the real API (the gate runs the handler for its caller), shown on /status
 * and in the budget alert by user name. Real app, Pixabay's fake, real Postgres.
 */

let db: TestDatabase;
let pixabay: PixabayFake;
let counter = 0;
const uniq = (q: string) => `${q} share${++counter}`;

beforeAll(async () => {
  db = await createTestDatabase();
  pixabay = await startPixabayFake();
});
afterAll(async () => {
  await pixabay?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE provider_pacing, provider_call_leases, provider_budget_usage, provider_budget_users');
});

const env = (limits: string) => ({
  ...UNTHROTTLED,
  PIXABAY_BASE_URL: pixabay.baseUrl,
  PIXABAY_API_KEY: pixabay.key,
  PROVIDER_LIMITS: limits,
});

async function images(t: TestApp, key: string, q: string) {
  const res = await t.app.inject({ url: `/api/v1/images/?q=${encodeURIComponent(q)}`, headers: { 'x-api-key': key } });
  return res.json() as { unresponsive?: { engine: string; reason: string }[] };
}

async function user(name: string) {
  const username = `${name}${++counter}`;
  return { username, ...(await createUserWithKey(db.pool, username)) };
}

/** Waits for the webhook deliveries the sender makes on its own schedule (bounded). */
async function delivered(receiver: { received: unknown[] }, n: number) {
  const deadline = Date.now() + 10_000;
  while (receiver.received.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

const pixabayAsked = (q: string) => pixabay.requests.filter((r) => r.query.get('q') === q).length;
const spent = (body: { unresponsive?: { engine: string; reason: string }[] }) =>
  (body.unresponsive ?? []).some((u) => u.engine === 'provider_05' && u.reason === 'budget_exhausted');

describe('user_share in PROVIDER_LIMITS', () => {
  it('reads a percentage, or off for one pool, and refuses anything else', () => {
    expect(parseProviderLimits('provider_05 day=10 user_share=20%')).toEqual({
      provider_05: { day: 10, userShare: 20 },
    });
    expect(parseProviderLimits('provider_05 month=10 user_share=off')).toEqual({
      provider_05: { month: 10, userShare: null },
    });
    expect(parseProviderLimits('provider_05 user_share=20')).toMatch(/percentage from 1% to 100%/);
    expect(parseProviderLimits('provider_05 user_share=0%')).toMatch(/percentage/);
    expect(parseProviderLimits('provider_05 user_share=101%')).toMatch(/percentage/);
  });
});

describe("a user's share of a budget", () => {
  it('sits the provider out for a user past their share on every instance, while another user still spends', async () => {
    const a = await buildTestApp(db, env('provider_05 day=10 user_share=20%'));
    const b = await buildTestApp(db, env('provider_05 day=10 user_share=20%'));
    try {
      const alice = await user('alice');
      const bob = await user('bob');
      // Two of ten calls each: alice's first two searches reach Pixabay, whichever instance serves them.
      const asked = [uniq('a'), uniq('b'), uniq('c'), uniq('d')];
      const answers = [];
      for (const [i, q] of asked.entries()) answers.push(await images(i % 2 ? b : a, alice.apiKey, q));
      expect(answers.map(spent)).toEqual([false, false, true, true]);
      expect(asked.map(pixabayAsked)).toEqual([1, 1, 0, 0]);

      // Bob's share is his own.
      const q = uniq('bob');
      expect(spent(await images(b, bob.apiKey, q))).toBe(false);
      expect(pixabayAsked(q)).toBe(1);

      // Over SearXNG alice's spent share reads as it does over REST.
      const sx = await a.app.inject({
        url: `/search?${new URLSearchParams({ q: uniq('sx'), categories: 'images', format: 'json' })}`,
        headers: { 'x-api-key': alice.apiKey },
      });
      expect(sx.json().unresponsive_engines).toContainEqual(['pixabay', 'budget_exhausted']);

      const { rows } = await db.pool.query(
        `SELECT (SELECT calls FROM provider_budget_usage WHERE provider = 'provider_05') AS total,
                array_agg(b.calls ORDER BY b.calls DESC) AS each
           FROM provider_budget_users b WHERE b.provider = 'provider_05'`,
      );
      expect(rows[0]).toEqual({ total: '3', each: ['2', '1'] });

      // /status names the biggest spender by user name.
      const text = limitsText((await b.app.health.limits()).get('provider_05'));
      expect(text).toContain('Budget: 3 of 10 calls this day (30 %) · at most 2 per user');
      expect(text).toContain(`most spent by ${alice.username} (2 calls)`);
      expect(text).not.toContain(alice.apiKey);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('names the biggest spender in the budget alert, never their key', async () => {
    const receiver = await startWebhookReceiver();
    const t = await buildTestApp(db, {
      ...env('provider_05 day=5 user_share=off'),
      ALERT_WEBHOOK_URLS: `${receiver.origin}/hook`,
      ALERT_DIGEST_WINDOW_MS: '50',
    });
    try {
      await db.pool.query('DELETE FROM alert_outbox');
      const carol = await user('carol');
      const dave = await user('dave');
      for (const who of [carol, carol, dave, carol]) await images(t, who.apiKey, uniq('alert'));
      await delivered(receiver, 1);
      const notice = receiver.received[0]!.body;
      expect(notice).toMatchObject({ percent: 80, calls: 4, spender: { user: carol.username, calls: 3 } });
      expect(notice.text).toContain(`Most spent by ${carol.username} (3 calls).`);
      expect(JSON.stringify(receiver.received)).not.toContain(carol.apiKey);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('says nothing of a spender when no user made the calls (probes, the CLI)', () => {
    const notice = {
      slug: 'provider_05',
      name: 'Pixabay',
      group: 'media',
      percent: 100,
      calls: 5,
      budget: 5,
      period: 'day' as const,
      spender: null,
      at: '2026-12-07T00:00:00.000Z',
    };
    expect(budgetText(notice)).not.toContain('Most spent');
  });
});
