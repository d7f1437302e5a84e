import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { alertTargetOf, formatOf } from '../../src/alerts/formats.js';
import { createAlertSender } from '../../src/alerts/sender.js';
import { targetOf } from '../../src/alerts/transitions.js';
import { parseConfig } from '../../src/config/index.js';
import type { ProviderSlug } from '../../src/providers/types.js';
import { type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Alert formats per webhook URL (`#format=<name>` or recognised from the
 * URL): each receiver on 127.0.0.1 checks the request as the real service
 * documents it and answers as it does (Slack "ok", Discord 204, ntfy and
 * Gotify their message JSON, Uptime Kuma {"ok":true}), refusing what the real
 * one refuses. Changes are queued in the real outbox and sent by the real
 * sender; Uptime Kuma's "down while anything is down" is checked through the
 * app, on the stored provider states.
 */

type Answer = { status: number; contentType: string; body: string };
const reply = (status: number, body: unknown): Answer => ({
  status,
  contentType: typeof body === 'string' ? 'text/plain' : 'application/json',
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** https://api.slack.com/messaging/webhooks: a JSON POST with `text`; "ok", else 400 invalid_payload. */
function slack(req: ReceivedRequest): Answer {
  const ok =
    req.method === 'POST' && req.headers['content-type'] === 'application/json' && typeof req.body?.text === 'string';
  return ok ? reply(200, 'ok') : reply(400, 'invalid_payload');
}

/** https://discord.com/developers/docs/resources/webhook#execute-webhook: `content` (at most 2,000), 204. */
function discord(req: ReceivedRequest): Answer {
  const content = req.body?.content;
  if (req.method !== 'POST' || typeof content !== 'string' || content.length === 0) {
    return reply(400, { message: 'Cannot send an empty message', code: 50006 });
  }
  if (content.length > 2000) return reply(400, { message: 'Invalid Form Body', code: 50035 });
  return { status: 204, contentType: 'text/plain', body: '' };
}

/** https://docs.ntfy.sh/publish/: POST the message to /<topic>, Title/Priority/Tags headers; the message as JSON. */
function ntfy(req: ReceivedRequest): Answer {
  const topic = /^\/([-_A-Za-z0-9]{1,64})$/.exec(req.path)?.[1];
  if (req.method !== 'POST' || !topic) return reply(404, { code: 40401, http: 404, error: 'page not found' });
  const priority = String(req.headers.priority ?? '3');
  if (!/^[1-5]$|^(min|low|default|high|max|urgent)$/.test(priority)) {
    return reply(400, { code: 40007, http: 400, error: 'invalid priority' });
  }
  return reply(200, {
    id: 'hwQ2YpKdmg',
    time: 1700000000,
    event: 'message',
    topic,
    title: req.headers.title,
    message: req.text,
    priority: Number(priority),
    tags: String(req.headers.tags ?? '').split(','),
  });
}

/** https://gotify.net/docs/pushmsg: POST /message?token=<app token> with JSON {title, message, priority}. */
function gotify(req: ReceivedRequest): Answer {
  if (req.path !== '/message' || req.method !== 'POST') return reply(404, { error: 'Not Found', errorCode: 404 });
  if ((req.query.get('token') ?? req.headers['x-gotify-key']) !== 'app-token') {
    return reply(401, {
      error: 'Unauthorized',
      errorCode: 401,
      errorDescription: 'you need to provide a valid access token',
    });
  }
  const { title, message, priority } = req.body ?? {};
  if (typeof message !== 'string' || !message) {
    return reply(400, { error: 'Bad Request', errorCode: 400, errorDescription: "Field 'message' is required" });
  }
  return reply(200, { id: 25, appid: 5, message, title, priority, date: '2025-01-01T00:00:00Z' });
}

/** https://github.com/louislam/uptime-kuma/wiki (push monitors): GET /api/push/<token>?status=up|down&msg=…&ping=. */
function kuma(req: ReceivedRequest): Answer {
  if (req.path !== '/api/push/push-token') return reply(404, { ok: false, msg: 'Monitor not found or not active.' });
  return reply(200, { ok: true });
}

const receivers = { slack, discord, ntfy, gotify, kuma };
type Kind = keyof typeof receivers;

let db: TestDatabase;
const at: Record<Kind, WebhookReceiver> = {} as Record<Kind, WebhookReceiver>;
const urls = (): Record<Kind, string> => ({
  slack: `${at.slack.origin}/services/T000/B000/secret-slack#format=slack`,
  discord: `${at.discord.origin}/api/webhooks/123/secret-discord#format=discord`,
  ntfy: `${at.ntfy.origin}/sift-alerts#format=ntfy`,
  gotify: `${at.gotify.origin}/message?token=app-token#format=gotify`,
  kuma: `${at.kuma.origin}/api/push/push-token#format=uptime-kuma`,
});

const NAMES: Record<string, { name: string; group: string }> = {
  provider_02: { name: 'Mojeek', group: 'engine' },
  provider_04: { name: 'Staan', group: 'engine' },
  provider_13: { name: 'OpenStreetMap Nominatim', group: 'maps' },
};
type Log = Record<'info' | 'warn' | 'error', (obj: unknown, msg?: string) => void>;
const quiet: Log = { info() {}, warn() {}, error() {} };

/** Sends, through the real outbox and sender, these changes (oldest first) to `urls`; `downNow` as the app would give it. */
async function send(
  changes: { provider: string; ok: boolean }[],
  targets: string[],
  options: { downNow?: string[]; names?: typeof NAMES; log?: Log } = {},
) {
  const names = options.names ?? NAMES;
  const sender = createAlertSender({
    pool: db.pool,
    urls: targets,
    windowMs: 0,
    userAgent: 'Sift/test',
    log: options.log ?? quiet,
    describe: (slug) => names[slug] ?? { name: slug, group: 'engine' },
    ...(options.downNow ? { downNow: async () => options.downNow! } : {}),
    pollMs: 3_600_000,
  });
  for (const url of targets) {
    for (const [i, c] of changes.entries()) {
      await db.pool.query(
        `INSERT INTO alert_outbox (target, provider, old_ok, new_ok, changed_at, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, now() - interval '1 second')`,
        [targetOf(url), c.provider, !c.ok, c.ok, new Date(Date.UTC(2025, 0, 1, 12, i))],
      );
    }
  }
  sender.start();
  await sender.tick();
  await sender.stop();
}

async function outboxRows(): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM alert_outbox');
  return Number(rows[0]!.n);
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const [kind, answer] of Object.entries(receivers)) at[kind as Kind] = await startWebhookReceiver({ answer });
});

afterEach(async () => {
  for (const r of Object.values(at)) r.reset();
  await db.pool.query('DELETE FROM alert_outbox');
});

afterAll(async () => {
  for (const r of Object.values(at)) await r?.close();
  await db?.drop();
});

describe('alert formats', () => {
  it('sends each receiver its documented payload, which it takes (nothing left to retry)', async () => {
    await send([{ provider: 'provider_02', ok: false }], Object.values(urls()));
    expect(await outboxRows()).toBe(0);
    const one = (kind: Kind) => {
      expect(at[kind].received, kind).toHaveLength(1);
      return at[kind].received[0]!;
    };
    const text = 'Sift: Mojeek (provider_02, engine) is down (since 2025-01-01 12:00:00 UTC).';

    expect(one('slack').body).toEqual({ text });
    expect(one('slack').path).toBe('/services/T000/B000/secret-slack');

    expect(one('discord').body).toEqual({
      content: 'Sift: Mojeek (provider\\_02, engine) is down (since 2025-01-01 12:00:00 UTC).',
      allowed_mentions: { parse: [] },
    });

    const n = one('ntfy');
    expect(n.method).toBe('POST');
    expect(n.path).toBe('/sift-alerts');
    expect(n.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(n.text).toBe(text);
    expect(n.headers).toMatchObject({ title: 'Sift: Mojeek is down', priority: '4', tags: 'warning' });
    // Plain text: ntfy renders markdown only when asked.
    expect(n.headers).not.toHaveProperty('markdown');

    const g = one('gotify');
    expect(g.path).toBe('/message');
    expect(g.query.get('token')).toBe('app-token');
    expect(g.body).toEqual({ title: 'Sift: Mojeek is down', message: text, priority: 8 });

    const k = one('kuma');
    expect(k.method).toBe('GET');
    expect(k.path).toBe('/api/push/push-token');
    expect(Object.fromEntries(k.query)).toEqual({ status: 'down', msg: text, ping: '' });

    // Each with Sift's user agent.
    for (const kind of Object.keys(receivers) as Kind[]) {
      expect(at[kind].received[0]!.headers['user-agent'], kind).toBe('Sift/test');
    }
  });

  it('reads a recovery as up, with the lower priority, in every format', async () => {
    await send([{ provider: 'provider_13', ok: true }], Object.values(urls()));
    const text = 'Sift: OpenStreetMap Nominatim (provider_13, maps) is back up (since 2025-01-01 12:00:00 UTC).';
    expect(at.slack.received[0]!.body).toEqual({ text });
    expect(at.ntfy.received[0]!.headers).toMatchObject({
      title: 'Sift: OpenStreetMap Nominatim is back up',
      priority: '3',
      tags: 'white_check_mark',
    });
    expect(at.gotify.received[0]!.body).toMatchObject({
      title: 'Sift: OpenStreetMap Nominatim is back up',
      priority: 4,
    });
    expect(at.kuma.received[0]!.query.get('status')).toBe('up');
  });

  it('sends a digest as one message per receiver, down when it leaves a provider down', async () => {
    await send(
      [
        { provider: 'provider_02', ok: false },
        { provider: 'provider_04', ok: false },
        { provider: 'provider_04', ok: true },
      ],
      Object.values(urls()),
    );
    const text = 'Sift: 3 provider state changes (down: Mojeek; down and back up: Staan).';
    for (const kind of Object.keys(receivers) as Kind[]) expect(at[kind].received, kind).toHaveLength(1);
    expect(at.slack.received[0]!.body).toEqual({ text });
    expect(at.discord.received[0]!.body.content).toBe(text);
    expect(at.ntfy.received[0]!.text).toBe(text);
    expect(at.ntfy.received[0]!.headers).toMatchObject({ title: 'Sift: 3 provider state changes', priority: '4' });
    expect(at.gotify.received[0]!.body).toEqual({
      title: 'Sift: 3 provider state changes',
      message: text,
      priority: 8,
    });
    expect(at.kuma.received[0]!.query.get('status')).toBe('down');
  });

  it("escapes each receiver's markup: Slack's mrkdwn, Discord's markdown; plain text elsewhere", async () => {
    const odd = '<!channel> & *bold* _it_ ~s~ `code` ||spoiler|| [x](https://evil.example) @everyone \\';
    await send([{ provider: 'provider_02', ok: false }], Object.values(urls()), {
      names: { provider_02: { name: odd, group: 'engine' } },
    });
    const slackText = String(at.slack.received[0]!.body.text);
    expect(slackText).toContain('&lt;!channel&gt; &amp; *bold*');
    expect(slackText).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);

    const content = String(at.discord.received[0]!.body.content);
    expect(content).toContain(
      '\\<!channel\\> & \\*bold\\* \\_it\\_ \\~s\\~ \\`code\\` \\|\\|spoiler\\|\\| \\[x\\](https://evil.example) \\@everyone \\\\',
    );
    // Every markup character is escaped: removing the escapes leaves none unescaped.
    expect(content.replace(/\\[\\*_~`|<>[\]@]/g, '')).not.toMatch(/[\\*_~`|<>[\]@]/);

    expect(at.ntfy.received[0]!.text).toContain(odd);
    expect(at.gotify.received[0]!.body.message).toContain(odd);
    expect(at.kuma.received[0]!.query.get('msg')).toContain(odd);
  });

  it('keeps a message within Discord and Uptime Kuma bounds', async () => {
    const long = 'N'.repeat(3000);
    await send([{ provider: 'provider_02', ok: false }], [urls().discord, urls().kuma], {
      names: { provider_02: { name: long, group: 'engine' } },
    });
    expect(String(at.discord.received[0]!.body.content)).toHaveLength(2000);
    expect(String(at.discord.received[0]!.body.content).endsWith('…')).toBe(true);
    expect(at.kuma.received[0]!.query.get('msg')!.length).toBeLessThanOrEqual(250);
    expect(await outboxRows()).toBe(0);
  });

  it('encodes a title that is not ASCII as ntfy decodes it (RFC 2047)', async () => {
    await send([{ provider: 'provider_02', ok: false }], [urls().ntfy], {
      names: { provider_02: { name: 'Météo Zürich', group: 'instant' } },
    });
    const title = String(at.ntfy.received[0]!.headers.title);
    const encoded = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=$/.exec(title);
    expect(encoded).not.toBeNull();
    expect(Buffer.from(encoded![1]!, 'base64').toString('utf8')).toBe('Sift: Météo Zürich is down');
    expect(at.ntfy.received[0]!.text).toContain('Météo Zürich');
  });

  it('sends a URL’s user name and password as Basic auth, and never logs a secret of the URL', async () => {
    const lines: string[] = [];
    const line = (o: unknown, m?: string) => {
      lines.push(`${JSON.stringify(o)} ${m}`);
    };
    const log = { info: line, warn: line, error: line };
    const ntfyUrl = `http://alice:s3cret-pass@${at.ntfy.origin.slice('http://'.length)}/sift-alerts#format=ntfy`;
    at.gotify.script([500]);
    await send([{ provider: 'provider_02', ok: false }], [ntfyUrl, urls().gotify, urls().slack], { log });
    expect(at.ntfy.received[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('alice:s3cret-pass').toString('base64')}`,
    );
    expect(at.ntfy.received[0]!.path).toBe('/sift-alerts');
    expect(lines.some((l) => l.includes('alerts: delivered'))).toBe(true);
    expect(lines.some((l) => l.includes('alerts: delivery failed') && l.includes('(gotify)'))).toBe(true);
    for (const secret of ['alice', 's3cret-pass', 'app-token', 'secret-slack', 'sift-alerts', 'services/T000']) {
      expect(lines.join('\n')).not.toContain(secret);
    }
  });

  it('recognises Slack, Discord, Uptime Kuma and ntfy.sh from their URLs; the fragment decides over the address', () => {
    const f = (u: string) => formatOf(new URL(u));
    expect(f('https://hooks.slack.com/services/T0/B0/XXXX')).toBe('slack');
    expect(f('https://discord.com/api/webhooks/123456/abc-DEF')).toBe('discord');
    expect(f('https://discordapp.com/api/webhooks/123456/abc')).toBe('discord');
    expect(f('https://discord.com/api/v10/webhooks/123456/abc')).toBe('discord');
    // Discord's Slack-compatible endpoint takes Slack's payload.
    expect(f('https://discord.com/api/webhooks/123456/abc/slack')).toBe('slack');
    expect(f('https://status.example/api/push/AbC123?status=up&msg=OK&ping=')).toBe('uptime-kuma');
    // A topic on ntfy's public server (the README's example).
    expect(f('https://ntfy.sh/my-sift-demo')).toBe('ntfy');
    expect(f('https://ntfy.sh/')).toBe('json');
    // Not unambiguous from the address: the generic JSON unless named (a self-hosted ntfy's topic).
    expect(f('https://ntfy.example/my-topic')).toBe('json');
    expect(f('https://ntfy.example/my-topic#format=ntfy')).toBe('ntfy');
    expect(f('https://gotify.example/message?token=x')).toBe('json');
    expect(f('https://chat.example/hooks/abc')).toBe('json');
    expect(f('https://hooks.slack.com/services/T0/B0/XXXX#format=json')).toBe('json');
    expect(f('https://push.example/sift#format=gotify')).toBe('gotify');

    // The fragment is never sent; Gotify's /message is added when the URL is the server's base.
    expect(alertTargetOf('https://gotify.example/message?token=t#format=gotify')).toEqual({
      format: 'gotify',
      url: 'https://gotify.example/message?token=t',
    });
  });

  it('posts to Gotify’s /message when the URL is the server’s base', async () => {
    await send([{ provider: 'provider_02', ok: false }], [`${at.gotify.origin}/?token=app-token#format=gotify`]);
    expect(at.gotify.received.map((r) => r.path)).toEqual(['/message']);
    expect(await outboxRows()).toBe(0);
  });

  it('refuses an unknown #format at start, naming the entry but never the URL', () => {
    expect(() =>
      parseConfig({
        ALERT_WEBHOOK_URLS: 'https://a.example/x#format=ntfy,https://b.example/y?token=hunter2#format=teams',
      }),
    ).toThrow(
      /^(?![\s\S]*hunter2)ALERT_WEBHOOK_URLS: entry 2: a fragment must be #format=<json\|slack\|discord\|ntfy\|gotify\|uptime-kuma>$/,
    );
    expect(parseConfig({ ALERT_WEBHOOK_URLS: 'https://a.example/x#format=uptime-kuma' }).ALERT_WEBHOOK_URLS).toEqual([
      'https://a.example/x#format=uptime-kuma',
    ]);
  });
});

describe('Uptime Kuma through the app', () => {
  it('reads an outage as down until every provider is back, whatever the last change was', {
    timeout: 60_000,
  }, async () => {
    const app = await buildTestApp(db, { ALERT_WEBHOOK_URLS: urls().kuma, ALERT_DIGEST_WINDOW_MS: '50' });
    try {
      const observe = async (provider: ProviderSlug, ok: boolean) => {
        app.app.health.recorder.record({
          provider,
          ok,
          error: ok ? undefined : 'HTTP 503',
          latencyMs: 5,
          source: 'query',
        });
        await app.app.health.recorder.flush();
      };
      const pushes = () => at.kuma.received.map((r) => r.query.get('status'));
      const waitForPushes = async (n: number) => {
        const until = Date.now() + 15_000;
        while (at.kuma.received.length < n) {
          if (Date.now() > until) throw new Error(`waited for ${n} pushes: ${JSON.stringify(pushes())}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      // First observations: no change, no push.
      await observe('provider_13', true);
      await observe('currency', true);
      await observe('provider_13', false);
      await waitForPushes(1);
      await observe('currency', false);
      await waitForPushes(2);
      // Frankfurter comes back; Nominatim is still down: still down, and the message says why.
      await observe('currency', true);
      await waitForPushes(3);
      await observe('provider_13', true);
      await waitForPushes(4);
      expect(pushes()).toEqual(['down', 'down', 'down', 'up']);
      expect(at.kuma.received[2]!.query.get('msg')).toMatch(/is back up .* Still down: OpenStreetMap Nominatim\.$/);
      expect(at.kuma.received[3]!.query.get('msg')).toMatch(
        /^Sift: OpenStreetMap Nominatim \(provider_13, maps\) is back up/,
      );
    } finally {
      await app.close();
    }
  });
});
