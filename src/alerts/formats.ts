import { type AlertFormat, namedAlertFormat } from '../config/index.js';

/*
 * What an alert looks like to each kind of receiver (docs/alerts.md). The
 * format is named per URL in ALERT_WEBHOOK_URLS by its fragment
 * (`https://ntfy.example/sift#format=ntfy`; the fragment is never sent), or
 * recognised from the URL where that is unambiguous (Slack's and Discord's
 * webhook URLs, Uptime Kuma's push path, a topic on ntfy.sh); anything else gets the generic JSON.
 *
 * Every text is Sift's own words (provider names, slugs, groups, states,
 * times), escaped for the receiver's markup: Slack's mrkdwn (also what the
 * generic JSON's `text` is, as Mattermost and Rocket.Chat read it), Discord's
 * markdown. ntfy, Gotify and Uptime Kuma get plain text (no markdown asked).
 */

export interface StateChange {
  slug: string;
  name: string;
  group: string;
  old_state: 'up' | 'down';
  new_state: 'up' | 'down';
  changed_at: string;
}

/** One webhook of ALERT_WEBHOOK_URLS, ready to call. */
export interface AlertTarget {
  format: AlertFormat;
  /** The URL called: without its fragment and its user name and password. */
  url: string;
  /** `Authorization: Basic …` from the URL's user name and password (ntfy's access control), if it has them. */
  authorization?: string;
}

export interface AlertRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const DISCORD_HOSTS = ['discord.com', 'discordapp.com', 'canary.discord.com', 'ptb.discord.com'];

/** The format for a URL: the one its fragment names, else the one its address is known for, else generic JSON. */
export function formatOf(url: URL): AlertFormat {
  const named = namedAlertFormat(url);
  if (named) return named;
  const host = url.hostname.toLowerCase();
  if (host === 'hooks.slack.com') return 'slack';
  // Discord's own webhook URLs, and their Slack-compatible endpoint.
  if (DISCORD_HOSTS.includes(host)) {
    const webhook = /^\/api(?:\/v\d+)?\/webhooks\/\d+\/[^/]+(\/slack)?\/?$/.exec(url.pathname);
    if (webhook) return webhook[1] ? 'slack' : 'discord';
  }
  if (/^\/api\/push\/[^/]+\/?$/.test(url.pathname)) return 'uptime-kuma';
  // ntfy's public server: a topic is the one path segment (https://ntfy.sh/<topic>).
  if (host === 'ntfy.sh' && /^\/[-_A-Za-z0-9]{1,64}\/?$/.test(url.pathname)) return 'ntfy';
  return 'json';
}

export function alertTargetOf(configured: string): AlertTarget {
  const url = new URL(configured);
  const format = formatOf(url);
  let authorization: string | undefined;
  if (url.username || url.password) {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }
  url.hash = '';
  url.username = '';
  url.password = '';
  return { format, url: url.href, ...(authorization ? { authorization } : {}) };
}

/**
 * Escapes text for Slack-style markup (Slack, Mattermost): `&`, `<` and `>` are what mentions such as
 * `<!channel>` and links such as `<https://x|y>` are made of. The texts hold only Sift's own words,
 * so this is a second line of defence.
 */
export function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Escapes Discord's markdown with backslashes: emphasis, strike, code, spoilers, quotes, masked links
 * and `<@…>`/`<#…>`/`<t:…>` tags; `@` so that no `@everyone` reads as one (allowed_mentions pings nobody
 * anyway). The texts are one line that starts with "Sift:", so line-start markup (headings, lists) cannot occur.
 */
export function escapeDiscord(text: string): string {
  return text.replace(/[\\*_~`|<>[\]@]/g, '\\$&');
}

const plain = (text: string) => text;
const oneLine = (text: string) => text.replace(/\s+/g, ' ');

/** "2025-06-01 12:00:00 UTC" */
function timeOf(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
}

/** What one provider did over a batch of its changes (oldest first), in words. */
function summaryOf(changes: readonly StateChange[]): string {
  const from = changes[0]!.old_state;
  const to = changes.at(-1)!.new_state;
  if (from !== to) return to;
  return from === 'up' ? 'down and back up' : 'up and down again';
}

/** Each provider's changes in the batch, in the order each first appears. */
function byProvider(changes: readonly StateChange[]): StateChange[][] {
  const map = new Map<string, StateChange[]>();
  for (const c of changes) {
    const list = map.get(c.slug);
    if (list) list.push(c);
    else map.set(c.slug, [c]);
  }
  return [...map.values()];
}

/** Whether the batch leaves any provider down. */
export function leavesDown(changes: readonly StateChange[]): boolean {
  return byProvider(changes).some((list) => list.at(-1)!.new_state === 'down');
}

/**
 * The text of a batch of changes (oldest first), every name escaped by `escapeText`: the change itself
 * when alone, else per provider what changed since the last message (a provider that went down and
 * came back within the batch is said so, never as "down" and "up").
 */
export function alertText(
  changes: readonly StateChange[],
  escapeText: (text: string) => string = escapeMarkup,
): string {
  if (changes.length === 1) {
    const c = changes[0]!;
    const label = escapeText(oneLine(`${c.name} (${c.slug}, ${c.group})`));
    return c.new_state === 'down'
      ? `Sift: ${label} is down (since ${timeOf(c.changed_at)}).`
      : `Sift: ${label} is back up (since ${timeOf(c.changed_at)}).`;
  }
  const groups = new Map<string, string[]>();
  for (const list of byProvider(changes)) {
    const words = summaryOf(list);
    const names = groups.get(words) ?? [];
    names.push(escapeText(oneLine(list[0]!.name)));
    groups.set(words, names);
  }
  const order = ['down', 'up', 'down and back up', 'up and down again'];
  const parts = order.filter((w) => groups.has(w)).map((w) => `${w}: ${groups.get(w)!.join(', ')}`);
  return `Sift: ${changes.length} provider state changes (${parts.join('; ')}).`;
}

/** A short title (ntfy, Gotify): "Sift: Mojeek is down", "Sift: 3 provider state changes". */
export function alertTitle(changes: readonly StateChange[]): string {
  if (changes.length > 1) return `Sift: ${changes.length} provider state changes`;
  const c = changes[0]!;
  return `Sift: ${c.name} is ${c.new_state === 'down' ? 'down' : 'back up'}`;
}

/**
 * The generic JSON body for a batch of changes (oldest first): the change itself when alone, else a
 * digest listing every change. Its `text` is escaped for Slack-style markup.
 */
export function alertMessage(changes: readonly StateChange[]): Record<string, unknown> {
  const text = alertText(changes);
  if (changes.length === 1) return { event: 'provider_state_changed', text, ...changes[0]! };
  return { event: 'provider_state_digest', text, count: changes.length, changes };
}

/** The event name of a batch (the generic JSON's `event`, the X-Sift-Event header). */
export function eventOf(changes: readonly StateChange[]): string {
  return changes.length === 1 ? 'provider_state_changed' : 'provider_state_digest';
}

/** An HTTP header value: RFC 2047 encoded-word when it is not ASCII (ntfy decodes it). */
function headerText(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

const json = 'application/json';
const DISCORD_MAX = 2000;
const KUMA_MSG_MAX = 250;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The request that tells `target` about the batch:
 * - json: POST the generic body (alertMessage);
 * - slack: POST `{"text"}` (mrkdwn-escaped);
 * - discord: POST `{"content", "allowed_mentions": {"parse": []}}` (markdown-escaped, at most 2,000 characters, pings nobody);
 * - ntfy: POST the plain text to the topic URL with `Title`, `Priority` (4 when it leaves a provider down, else 3) and `Tags`;
 * - gotify: POST `{"title", "message", "priority"}` (8 down, 4 up) to `/message` (the URL's `?token=` kept);
 * - uptime-kuma: GET the push URL with `status=down` when the batch leaves a provider down or one is
 *   down now (`downNow`: their names, when known), else `up`, and `msg`.
 */
export function alertRequest(
  target: AlertTarget,
  changes: readonly StateChange[],
  downNow?: readonly string[],
): AlertRequest {
  const headers: Record<string, string> = { 'x-sift-event': eventOf(changes) };
  if (target.authorization) headers.authorization = target.authorization;
  const down = leavesDown(changes);
  const post = (contentType: string, body: string): AlertRequest => ({
    method: 'POST',
    url: target.url,
    headers: { ...headers, 'content-type': contentType },
    body,
  });
  switch (target.format) {
    case 'json':
      return post(json, JSON.stringify(alertMessage(changes)));
    case 'slack':
      return post(json, JSON.stringify({ text: alertText(changes, escapeMarkup) }));
    case 'discord':
      return post(
        json,
        JSON.stringify({
          content: cut(alertText(changes, escapeDiscord), DISCORD_MAX),
          allowed_mentions: { parse: [] },
        }),
      );
    case 'ntfy':
      headers.title = headerText(alertTitle(changes));
      headers.priority = down ? '4' : '3';
      headers.tags = down ? 'warning' : 'white_check_mark';
      return post('text/plain; charset=utf-8', alertText(changes, plain));
    case 'gotify': {
      const url = new URL(target.url);
      if (!/\/message\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/message`;
      return {
        ...post(
          json,
          JSON.stringify({ title: alertTitle(changes), message: alertText(changes, plain), priority: down ? 8 : 4 }),
        ),
        url: url.href,
      };
    }
    case 'uptime-kuma': {
      const url = new URL(target.url);
      const isDown = down || (downNow ?? []).length > 0;
      // A provider coming back while another stays down: still an outage, and the message says so.
      const text =
        isDown && !down
          ? `${alertText(changes, plain)} Still down: ${downNow!.join(', ')}.`
          : alertText(changes, plain);
      url.searchParams.set('status', isDown ? 'down' : 'up');
      url.searchParams.set('msg', cut(text, KUMA_MSG_MAX));
      url.searchParams.set('ping', '');
      return { method: 'GET', url: url.href, headers };
    }
  }
}

/** A provider's budget of calls reaching a share (80 or 100 %) of its period. */
export interface BudgetNotice {
  slug: string;
  name: string;
  group: string;
  percent: number;
  calls: number;
  budget: number;
  period: 'month' | 'day';
  /** The user whose searches spent the most of it this period (a user name, never a key); null: none did. */
  spender: { user: string; calls: number } | null;
  at: string;
}

const count = new Intl.NumberFormat('en-US');

/** "Sift: Stack Exchange (provider_12, cards) has used 80 % of its daily budget (240 of 300 calls)." */
export function budgetText(n: BudgetNotice, escapeText: (text: string) => string = escapeMarkup): string {
  const label = escapeText(oneLine(`${n.name} (${n.slug}, ${n.group})`));
  const period = n.period === 'day' ? 'daily' : 'monthly';
  const used = `${count.format(n.calls)} of ${count.format(n.budget)} calls`;
  const by = n.spender
    ? ` Most spent by ${escapeText(oneLine(n.spender.user))} (${count.format(n.spender.calls)} ${n.spender.calls === 1 ? 'call' : 'calls'}).`
    : '';
  return n.percent >= 100
    ? `Sift: ${label} has spent its ${period} budget (${used}); searches leave it out until the ${n.period} ends.${by}`
    : `Sift: ${label} has used ${n.percent} % of its ${period} budget (${used}).${by}`;
}

/**
 * The request that tells `target` of a budget notice, in its format as alertRequest does (event
 * `provider_budget`); null for Uptime Kuma, whose push monitor reads any call as up or down.
 */
export function budgetRequest(target: AlertTarget, notice: BudgetNotice): AlertRequest | null {
  const headers: Record<string, string> = { 'x-sift-event': 'provider_budget' };
  if (target.authorization) headers.authorization = target.authorization;
  const post = (body: string, contentType = json): AlertRequest => ({
    method: 'POST',
    url: target.url,
    headers: { ...headers, 'content-type': contentType },
    body,
  });
  const title = `Sift: ${notice.name} budget at ${notice.percent} %`;
  const spent = notice.percent >= 100;
  switch (target.format) {
    case 'json':
      return post(JSON.stringify({ event: 'provider_budget', text: budgetText(notice), ...notice }));
    case 'slack':
      return post(JSON.stringify({ text: budgetText(notice, escapeMarkup) }));
    case 'discord':
      return post(
        JSON.stringify({
          content: cut(budgetText(notice, escapeDiscord), DISCORD_MAX),
          allowed_mentions: { parse: [] },
        }),
      );
    case 'ntfy':
      headers.title = headerText(title);
      headers.priority = spent ? '4' : '3';
      headers.tags = 'warning';
      return post(budgetText(notice, plain), 'text/plain; charset=utf-8');
    case 'gotify': {
      const url = new URL(target.url);
      if (!/\/message\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/message`;
      return {
        ...post(JSON.stringify({ title, message: budgetText(notice, plain), priority: spent ? 8 : 4 })),
        url: url.href,
      };
    }
    case 'uptime-kuma':
      return null;
  }
}
