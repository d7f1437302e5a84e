import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { alertMessage } from '../../src/alerts/formats.js';
import { createAlertSender } from '../../src/alerts/sender.js';
import { targetOf } from '../../src/alerts/transitions.js';
import { parseConfig } from '../../src/config/index.js';
import type { ProviderSlug } from '../../src/providers/types.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Webhooks on provider state changes: two app instances on one database and
 * a local receiver. Each change is delivered exactly once whichever instance
 * saw it (decided in Postgres), changes made together arrive as one digest,
 * a failing receiver is retried with back-off, and a hanging one holds up
 * nothing else.
 */

// Wide enough that the two instances' status writes on a loaded 2-core machine (CI runs test files
// side by side) still land in one window: 1 s was not, twice in CI.
const WINDOW_MS = 2000;

interface Receiver extends WebhookReceiver {
  url: string;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = await startWebhookReceiver();
  return Object.assign(receiver, { url: `${receiver.origin}/hooks/secret-path-token` });
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: TestDatabase;
let receiver: Receiver;
let a: TestApp;
let b: TestApp;

/** Records one outcome on an instance and writes it now (as a search or probe would, write-behind). */
async function observe(app: TestApp, provider: ProviderSlug, ok: boolean, error = 'connection refused') {
  app.app.health.recorder.record({ provider, ok, error: ok ? undefined : error, latencyMs: 5, source: 'query' });
  await app.app.health.recorder.flush();
}

async function outboxRows(): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM alert_outbox');
  return Number(rows[0]!.n);
}

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startReceiver();
  const env = { ALERT_WEBHOOK_URLS: receiver.url, ALERT_DIGEST_WINDOW_MS: String(WINDOW_MS) };
  [a, b] = await Promise.all([buildTestApp(db, env), buildTestApp(db, env)]);
});

afterEach(() => {
  receiver.reset();
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await receiver?.close();
  await db?.drop();
});

describe('alert webhooks', () => {
  it('sends each change once across two instances: up to down, then down to up', { timeout: 90_000 }, async () => {
    // First observations (no state before): nothing to announce.
    await Promise.all([observe(a, 'provider_02', true), observe(b, 'provider_02', true)]);
    await sleep(WINDOW_MS * 2);
    expect(receiver.received).toEqual([]);
    expect(await outboxRows()).toBe(0);

    // Both instances see it fail at the same moment: one change, decided once.
    await Promise.all([observe(a, 'provider_02', false, 'timeout A'), observe(b, 'provider_02', false, 'timeout B')]);
    await waitFor(() => receiver.received.length >= 1);
    await sleep(WINDOW_MS * 3);
    expect(receiver.received).toHaveLength(1);
    const down = receiver.received[0]!;
    expect(down.headers['content-type']).toBe('application/json');
    expect(down.headers['x-sift-event']).toBe('provider_state_changed');
    expect(down.body).toMatchObject({
      event: 'provider_state_changed',
      slug: 'provider_02',
      name: 'Mojeek',
      group: 'engine',
      old_state: 'up',
      new_state: 'down',
    });
    expect(new Date(String(down.body.changed_at)).toISOString()).toBe(down.body.changed_at);
    expect(String(down.body.text)).toMatch(
      /^Sift: Mojeek \(provider_02, engine\) is down \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)\.$/,
    );
    // The upstream's error text is for the signed-in status page only, never in a webhook.
    expect(down.body).not.toHaveProperty('last_error');
    expect(JSON.stringify(down.body)).not.toMatch(/timeout [AB]/);

    // Still failing: no change, nothing sent.
    await observe(b, 'provider_02', false, 'timeout again');
    await sleep(WINDOW_MS * 2);
    expect(receiver.received).toHaveLength(1);

    // Back up, seen by both: one message.
    await Promise.all([observe(a, 'provider_02', true), observe(b, 'provider_02', true)]);
    await waitFor(() => receiver.received.length >= 2);
    await sleep(WINDOW_MS * 3);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toMatchObject({
      slug: 'provider_02',
      old_state: 'down',
      new_state: 'up',
    });
    expect(JSON.stringify(receiver.received[1]!.body)).not.toContain('timeout again');
    expect(await outboxRows()).toBe(0);
  });

  it('sends one digest when several providers flip together, even on different instances', {
    timeout: 90_000,
  }, async () => {
    const slugs: ProviderSlug[] = ['provider_01', 'provider_03', 'provider_05', 'provider_06', 'provider_08'];
    for (const slug of slugs) await observe(a, slug, true);
    // Whatever that announced (nothing, or a row left by an earlier state) is out before the outage.
    await waitFor(async () => (await outboxRows()) === 0);
    await sleep(WINDOW_MS * 2);
    receiver.reset();

    // A network outage: every provider fails within the window, seen by either instance (one
    // status write on each, at the same moment).
    await Promise.all(
      [a, b].map((app, n) => {
        const recorder = app.app.health.recorder;
        for (const slug of slugs.filter((_, i) => i % 2 === n)) {
          recorder.record({ provider: slug, ok: false, error: 'connect ECONNREFUSED', latencyMs: 5, source: 'query' });
        }
        return recorder.flush();
      }),
    );
    await waitFor(() => receiver.received.length >= 1);
    await sleep(WINDOW_MS * 3);
    // Compared by what each message held, so that a failure says what arrived.
    const arrived = receiver.received.map((r) => ({
      at: r.at,
      event: r.body.event,
      slugs: r.body.changes ? r.body.changes.map((c) => c.slug) : [r.body.slug],
    }));
    expect(arrived, JSON.stringify(arrived)).toHaveLength(1);
    const digest = receiver.received[0]!.body;
    expect(digest.event).toBe('provider_state_digest');
    expect(digest.count).toBe(5);
    expect(digest.changes!.map((c) => c.slug).sort()).toEqual(slugs);
    for (const change of digest.changes!) {
      expect(change).toMatchObject({ old_state: 'up', new_state: 'down' });
      expect(change).not.toHaveProperty('last_error');
      expect(typeof change.name).toBe('string');
      expect(typeof change.group).toBe('string');
    }
    expect(String(digest.text)).toMatch(/^Sift: 5 provider state changes \(down: /);
  });

  it('retries a failing receiver with growing delays until it takes the message, once', {
    timeout: 90_000,
  }, async () => {
    await observe(a, 'provider_04', true);
    await sleep(WINDOW_MS * 2);
    receiver.reset();
    receiver.script([500, 503]);

    await observe(b, 'provider_04', false, 'HTTP 500');
    await waitFor(() => receiver.received.length >= 3, 30_000);
    await waitFor(async () => (await outboxRows()) === 0);
    await sleep(WINDOW_MS * 3);
    expect(receiver.received).toHaveLength(3);
    for (const r of receiver.received) expect(r.body).toMatchObject({ slug: 'provider_04', new_state: 'down' });
    const [first, second, third] = receiver.received.map((r) => r.at);
    // Back-off: the window, then twice the window.
    expect(second! - first!).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    expect(third! - second!).toBeGreaterThanOrEqual(2 * WINDOW_MS - 50);
  });

  it('never holds up status writes, requests or shutdown while a receiver hangs', async () => {
    const c = await buildTestApp(db, {
      ALERT_WEBHOOK_URLS: receiver.url,
      ALERT_DIGEST_WINDOW_MS: '50',
    });
    await observe(c, 'provider_09', true);
    await sleep(200);
    receiver.reset();
    receiver.script(['hang']);

    // The delivery can end only by the sender's 10 s timeout or by its abandonment at shutdown: what
    // returns while it still hangs did not wait for it (no wall-clock bound needed).
    await observe(c, 'provider_09', false);
    // The status write returned before the delivery ended: it has not been received yet, or still hangs.
    expect(receiver.received.length === 0 || receiver.hanging() === 1).toBe(true);
    await waitFor(() => receiver.received.length >= 1);
    // The delivery hangs; the app still answers (its roll-up reads the state just written).
    const res = await c.app.inject({ url: '/status/health' });
    expect((res.json() as { down: string[] }).down).toContain('provider_09');
    expect(receiver.hanging()).toBe(1);
    await c.close();
    // Shutdown abandoned the delivery (its connection gone) without waiting for the timeout: the row
    // is still under the claim's lease (60 s), where a timed-out attempt would have set a back-off
    // of about the 50 ms window.
    await waitFor(() => receiver.hanging() === 0);
    expect(receiver.received).toHaveLength(1);
    const { rows } = await db.pool.query<{ leased: boolean }>(
      "SELECT next_attempt_at > clock_timestamp() + interval '30 seconds' AS leased FROM alert_outbox",
    );
    expect(rows).toEqual([{ leased: true }]);
    await db.pool.query('DELETE FROM alert_outbox');
  });

  it('reads ALERT_WEBHOOK_URLS as a list of http(s) URLs, never echoing a bad one (it may hold a secret)', () => {
    const config = parseConfig({ ALERT_WEBHOOK_URLS: 'https://hooks.example/a, http://10.0.0.2:9000/b' });
    expect(config.ALERT_WEBHOOK_URLS).toEqual(['https://hooks.example/a', 'http://10.0.0.2:9000/b']);
    expect(parseConfig({}).ALERT_WEBHOOK_URLS).toEqual([]);
    expect(() => parseConfig({ ALERT_WEBHOOK_URLS: 'https://ok.example/a,ftp://user:hunter2@x/y' })).toThrow(
      /^(?![\s\S]*hunter2)[\s\S]*ALERT_WEBHOOK_URLS: must be a comma list of http\(s\) URLs/,
    );
  });

  it('never splits one batch between instances that tick at the same moment', { timeout: 60_000 }, async () => {
    const quiet = { info() {}, warn() {}, error() {} };
    // Four instances' senders; long batches, so that claims running side by side would overlap.
    const senders = [0, 1, 2, 3].map(() =>
      createAlertSender({
        pool: db.pool,
        urls: [receiver.url],
        windowMs: 0,
        userAgent: 'test',
        log: quiet,
        describe: (slug) => ({ name: slug, group: 'engine' }),
        pollMs: 3_600_000,
        batchSize: 1000,
      }),
    );
    for (const s of senders) s.start();
    await sleep(200);
    const ROWS = 400;
    const ROUNDS = 8;
    for (let round = 0; round < ROUNDS; round++) {
      // Changes all due now, none claimed yet.
      await db.pool.query(
        `INSERT INTO alert_outbox (target, provider, old_ok, new_ok, last_error, changed_at, next_attempt_at)
         SELECT $1, 'provider_0' || (1 + n % 8), true, false, 'timeout', now(), now() - interval '1 second'
           FROM generate_series(1, $2) AS n`,
        [targetOf(receiver.url), ROWS],
      );
      await Promise.all(senders.map((s) => s.tick()));
      await waitFor(async () => (await outboxRows()) === 0);
    }
    await Promise.all(senders.map((s) => s.stop()));
    expect(receiver.received.map((r) => r.body.count)).toEqual(Array(ROUNDS).fill(ROWS));
  });

  it('writes the digest and single bodies with every documented field', () => {
    const change = {
      slug: 'provider_13',
      name: 'OpenStreetMap Nominatim',
      group: 'maps',
      old_state: 'down' as const,
      new_state: 'up' as const,
      changed_at: '2025-01-01T00:00:00.000Z',
    };
    expect(alertMessage([change])).toEqual({
      event: 'provider_state_changed',
      text: 'Sift: OpenStreetMap Nominatim (provider_13, maps) is back up (since 2025-01-01 00:00:00 UTC).',
      ...change,
    });
    expect(alertMessage([change, { ...change, slug: 'provider_14', name: 'Frankfurter' }])).toMatchObject({
      event: 'provider_state_digest',
      count: 2,
      text: 'Sift: 2 provider state changes (up: OpenStreetMap Nominatim, Frankfurter).',
    });
  });
  it('says per provider what changed since the last message: a flap in words, never as "down" and "up"', () => {
    const at = (m: number) => `2025-01-01T00:0${m}:00.000Z`;
    const staan = { slug: 'provider_04', name: 'Staan', group: 'engine' };
    const mojeek = { slug: 'provider_02', name: 'Mojeek', group: 'engine' };
    const flapped = alertMessage([
      { ...staan, old_state: 'up', new_state: 'down', changed_at: at(1) },
      { ...mojeek, old_state: 'up', new_state: 'down', changed_at: at(2) },
      { ...staan, old_state: 'down', new_state: 'up', changed_at: at(3) },
    ]);
    expect(flapped).toMatchObject({
      event: 'provider_state_digest',
      count: 3,
      text: 'Sift: 3 provider state changes (down: Mojeek; down and back up: Staan).',
    });
    // Every change is still listed, oldest first, for receivers that read the fields.
    expect((flapped.changes as { slug: string; new_state: string }[]).map((c) => [c.slug, c.new_state])).toEqual([
      ['provider_04', 'down'],
      ['provider_02', 'down'],
      ['provider_04', 'up'],
    ]);
    expect(
      alertMessage([
        { ...staan, old_state: 'down', new_state: 'up', changed_at: at(1) },
        { ...staan, old_state: 'up', new_state: 'down', changed_at: at(2) },
        { ...staan, old_state: 'down', new_state: 'up', changed_at: at(3) },
      ]).text,
    ).toBe('Sift: 3 provider state changes (up: Staan).');
    expect(
      alertMessage([
        { ...staan, old_state: 'down', new_state: 'up', changed_at: at(1) },
        { ...staan, old_state: 'up', new_state: 'down', changed_at: at(2) },
      ]).text,
    ).toBe('Sift: 2 provider state changes (up and down again: Staan).');
  });

  it("escapes the receiver's markup (Slack, Mattermost) in every text", () => {
    const odd = {
      slug: 'provider_04',
      name: '<!channel> & <https://evil.example|Click>',
      group: 'engine',
      old_state: 'up' as const,
      new_state: 'down' as const,
      changed_at: '2025-01-01T00:00:00.000Z',
    };
    const single = String(alertMessage([odd]).text);
    const digest = String(alertMessage([odd, { ...odd, slug: 'provider_02' }]).text);
    for (const text of [single, digest]) {
      expect(text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|Click&gt;');
      expect(text).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
    }
  });
});
