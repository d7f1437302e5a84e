import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEverythingLocal, demoEnvironment, startFakes } from '../../scripts/demo.js';
import { parseConfig } from '../../src/config/index.js';
import { PROVIDERS } from '../../src/providers/registry.js';
import { WebClient } from '../auth/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';

/*
 * `npm run demo` end to end: the script as a child process (its own embedded
 * database in a temporary directory, an ephemeral port, an environment that
 * switches on metrics, a webhook, a quota and a monitor token of its own, one
 * provider failing from the start), every curl it prints run with fetch, the
 * fault control used to make an outage and end it, then Ctrl-C.
 */

const READY = 'Ctrl-C stops the demo.';

let child: ChildProcess;
let dataDir: string;
let stdout = '';
let stderr = '';
let exited: Promise<number | null>;
let receiver: WebhookReceiver;
const MONITOR_TOKEN = 'token-from-the-environment';

function field(label: string): string {
  const match = new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(stdout);
  if (!match) throw new Error(`no "${label}" line in the demo's output:\n${stdout}`);
  return match[1]!;
}

interface Curl {
  line: string;
  url: string;
  init: RequestInit;
}

/** The printed curl commands, as fetch calls: -H headers, --data-urlencode form fields (a POST), the quoted URL. */
function printedCurls(): Curl[] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '))
    .map((line) => {
      const tokens = [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
      const headers: Record<string, string> = {};
      const form = new URLSearchParams();
      let url = '';
      let method = 'GET';
      let data: string | undefined;
      for (let i = 1; i < tokens.length; i++) {
        const token = tokens[i]!;
        if (token === '-H') {
          const header = tokens[++i]!;
          const colon = header.indexOf(':');
          headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
        } else if (token === '--data-urlencode') {
          const pair = tokens[++i]!;
          const eq = pair.indexOf('=');
          form.append(pair.slice(0, eq), pair.slice(eq + 1));
        } else if (token === '-d') {
          data = tokens[++i]!;
        } else if (token === '-X') {
          method = tokens[++i]!;
        } else if (token.startsWith('-')) {
          throw new Error(`unexpected curl option ${token} in: ${line}`);
        } else {
          url = token;
        }
      }
      if (data !== undefined) return { line, url, init: { method: 'POST', headers, body: data } };
      return { line, url, init: form.size > 0 ? { method: 'POST', headers, body: form } : { method, headers } };
    });
}

async function waitFor(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function healthOf(slug: string): Promise<string> {
  const res = await fetch(`${field('Base URL')}/status/health/${slug}`, {
    headers: { 'X-Monitor-Token': MONITOR_TOKEN },
  });
  return ((await res.json()) as { state: string }).state;
}

async function webSearch(q: string, engine?: string) {
  const query = new URLSearchParams({ q, ...(engine ? { engine } : {}) });
  const res = await fetch(`${field('Base URL')}/api/v1/web/?${query}`, { headers: { 'X-Api-Key': field('API key') } });
  return (await res.json()) as {
    engine: string[];
    results: unknown[];
    unresponsive: { engine: string; reason: string }[];
  };
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'sift-demo-'));
  receiver = await startWebhookReceiver();
  const args = ['--port', '0', '--control-port', '0', '--data-dir', dataDir, '--fail', 'provider_03'];
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      METRICS_ENABLED: 'true',
      ALERT_WEBHOOK_URLS: `${receiver.origin}/hooks/secret-token,${receiver.origin}/sift-demo#format=ntfy`,
      ALERT_DIGEST_WINDOW_MS: '100',
      API_MONTHLY_QUOTA: '1000',
      STATUS_MONITOR_TOKEN: MONITOR_TOKEN,
      // Every line the demo can write, as JSON: none may hold a key.
      LOG_LEVEL: 'trace',
      LOG_FORMAT: 'json',
      // What the options set beats the environment.
      PORT: '1',
    },
  });
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo not ready in 80 s:\n${stdout}\n${stderr}`)), 80_000);
    const check = () => {
      if (stdout.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`demo exited with ${code} before it was ready:\n${stdout}\n${stderr}`));
    });
  });
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await receiver?.close();
}, 30_000);

describe('npm run demo', () => {
  it('starts with the providers named by --fail failing, as their upstream would, until restored', async () => {
    const control = field('Control');
    expect(control).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const states = (await (await fetch(`${control}/providers`)).json()) as { providers: Record<string, string> };
    expect(states.providers).toMatchObject({ provider_03: 'error', provider_01: 'ok' });
    const web = await webSearch('failing from the start');
    expect(web.unresponsive).toEqual([{ engine: 'provider_03', reason: 'error' }]);
    expect(web.results.length).toBeGreaterThan(0);
    await waitFor('provider_03 down on /status/health', async () => (await healthOf('provider_03')) === 'down');

    // Restored through the control, it answers the next search.
    const restored = await fetch(`${control}/providers/provider_03/restore`, { method: 'POST' });
    expect(await restored.json()).toEqual({ provider: 'provider_03', state: 'ok' });
    expect((await webSearch('restored')).unresponsive).toEqual([]);
    await waitFor('provider_03 up on /status/health', async () => (await healthOf('provider_03')) === 'up');
  });

  it('reads the environment, the options winning over it: metrics, webhook, quota, monitor token', async () => {
    const base = field('Base URL');
    // PORT=1 in the environment, --port 0 on the command line.
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(base).not.toMatch(/:1$/);
    expect(stdout).toContain(`Monitor    token ${MONITOR_TOKEN}`);
    expect(stdout).toMatch(/^\s+Alerts\s+127\.0\.0\.1:\d+ \(json\), 127\.0\.0\.1:\d+ \(ntfy\) /m);
    // The webhook's path holds its secret: the demo names the host only.
    expect(stdout + stderr).not.toContain('secret-token');

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE sift_provider_state gauge');

    const key = (await (await fetch(`${base}/api/v1/key/`, { headers: { 'X-Api-Key': field('API key') } })).json()) as {
      usage: { quota: number | null };
    };
    expect(key.usage.quota).toBe(1000);
  });

  it('prints the key, the sign-in and a curl for every endpoint, each answering as it says', async () => {
    const base = field('Base URL');
    const control = field('Control');
    const key = field('API key');
    expect(key).toMatch(/^svc_sk_[0-9a-f]{8}\./);
    const curls = printedCurls();
    expect(curls.length).toBeGreaterThanOrEqual(20);
    // The control's commands: the states, then failing and restoring the provider that --fail named.
    expect(curls.filter((c) => c.url.startsWith(`${control}/`)).map((c) => `${c.init.method} ${c.url}`)).toEqual([
      `GET ${control}/providers`,
      `POST ${control}/providers/provider_03/fail?mode=error`,
      `POST ${control}/providers/provider_03/restore`,
    ]);
    for (const curl of curls) {
      expect(curl.url.startsWith(`${base}/`) || curl.url.startsWith(`${control}/`), curl.line).toBe(true);
      const res = await fetch(curl.url, curl.init);
      // One curl shows a refusal on purpose: a page the demo site's robots.txt disallows.
      const refused = curl.url.includes(encodeURIComponent('/private/page.html'));
      expect(res.status, `${curl.line}\n${await res.clone().text()}`).toBe(refused ? 502 : 200);
      await res.arrayBuffer();
    }

    // Every endpoint of the API index has a curl, and so do the monitor endpoints.
    const index = (await (await fetch(`${base}/api/v1/`, { headers: { 'X-Api-Key': key } })).json()) as Record<
      string,
      string
    >;
    const urls = curls.map((c) => c.url.split('?')[0]!);
    for (const endpoint of Object.values(index)) expect(urls, endpoint).toContain(endpoint);
    for (const p of ['/up', '/status/health', '/status/health/provider_01', '/search', '/mcp']) {
      expect(urls).toContain(base + p);
    }
    // The MCP example is a tool call that answers results.
    const mcp = curls.find((c) => c.url === `${base}/mcp`)!;
    const called = (await (await fetch(mcp.url, mcp.init)).json()) as { result?: { isError?: boolean } };
    expect(called.result?.isError).toBeFalsy();
  });

  it('configures every provider against a fake, labelled as demo data', async () => {
    const key = field('API key');
    const base = field('Base URL');
    const status = (await (
      await fetch(`${base}/api/v1/status/`, { headers: { Authorization: `Api-Key ${key}` } })
    ).json()) as {
      providers: { slug: string; name: string }[];
    };
    expect(status.providers).toHaveLength(PROVIDERS.length);
    for (const p of status.providers) expect(p.name, p.slug).toMatch(/ \(demo\)$/);

    const web = (await (await fetch(`${base}/api/v1/web/?q=demo`, { headers: { 'X-Api-Key': key } })).json()) as {
      engine: string[];
      results: unknown[];
      unresponsive: unknown[];
    };
    expect(web.engine).toEqual(['provider_01', 'provider_02', 'provider_03', 'provider_04']);
    expect(web.results.length).toBeGreaterThan(0);
    expect(web.unresponsive).toEqual([]);
  });

  it('signs the demo user in to /status, under a demo banner', async () => {
    const base = field('Base URL');
    const signIn = /Sign in\s+\S+ as (\S+) \/ (\S+)/.exec(stdout);
    expect(signIn).not.toBeNull();
    const client = new WebClient(base);
    const login = await client.get('/login');
    expect(login.text).toContain('class="demo-banner"');
    const res = await client.signIn(signIn![1]!, signIn![2]!);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).not.toContain('/login');
    const page = await client.get('/status');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Demo data');
    expect(page.text).toContain('Brave Search (demo)');
  });

  it('shows an outage made with the control on /status/health, /metrics and the webhook, and its end', async () => {
    const base = field('Base URL');
    const control = field('Control');
    const providerState = async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return /^sift_provider_state\{provider="provider_02",group="engine",state="down"\} (\d)$/m.exec(text)?.[1];
    };
    const alerted = (state: string) =>
      receiver.received.some((r) => r.body?.slug === 'provider_02' && r.body.new_state === state);
    expect(await healthOf('provider_02')).toBe('up');

    const failed = await fetch(`${control}/providers/provider_02/fail?mode=error`, { method: 'POST' });
    expect(failed.status).toBe(200);
    expect((await webSearch('outage', 'provider_02')).unresponsive).toEqual([
      { engine: 'provider_02', reason: 'error' },
    ]);
    await waitFor('provider_02 down on /status/health', async () => (await healthOf('provider_02')) === 'down');
    expect(await providerState()).toBe('1');
    await waitFor('the webhook to hear provider_02 is down', () => alerted('down'));
    const down = receiver.received.find((r) => r.body?.new_state === 'down')!;
    expect(down.path).toBe('/hooks/secret-token');
    expect(String(down.body.text)).toMatch(/^Sift: Mojeek \(demo\) \(provider_02, engine\) is down/);
    // The second URL asked for ntfy's form.
    const ntfyDown = () => receiver.received.find((r) => r.path === '/sift-demo' && r.text.includes('provider_02'));
    await waitFor('the ntfy message', () => ntfyDown() !== undefined);
    const ntfy = ntfyDown()!;
    expect(ntfy.headers).toMatchObject({ title: 'Sift: Mojeek (demo) is down', priority: '4' });
    expect(ntfy.text).toMatch(/^Sift: Mojeek \(demo\) \(provider_02, engine\) is down/);

    const restored = await fetch(`${control}/providers/provider_02/restore`, { method: 'POST' });
    expect(restored.status).toBe(200);
    expect((await webSearch('recovered', 'provider_02')).unresponsive).toEqual([]);
    await waitFor('provider_02 up on /status/health', async () => (await healthOf('provider_02')) === 'up');
    expect(await providerState()).toBe('0');
    await waitFor('the webhook to hear provider_02 is back up', () => alerted('up'));
  });

  it('logs JSON lines as LOG_FORMAT says, and never the key, even at trace level with the key in the URL', async () => {
    const base = field('Base URL');
    const key = field('API key');
    const res = await fetch(`${base}/searxng/${key}/search?q=private+words&format=json`);
    expect(res.status).toBe(200);
    await fetch(`${base}/SEARXNG/${key}/search?q=private+words`);
    await waitFor('the request lines', () => stderr.includes('"msg":"request completed"'));
    const lines = stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(stderr).toContain('"url":"/searxng/[redacted]/search"');
    expect(stderr).not.toContain(key.split('.')[1]!);
    expect(stderr).not.toContain('private+words');
  });

  it('answers a wrong control request with a 4xx JSON error', async () => {
    const control = field('Control');
    const unknown = await fetch(`${control}/providers/provider_99/fail`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'no provider "provider_99"' });
    const badMode = await fetch(`${control}/providers/provider_02/fail?mode=explode`, { method: 'POST' });
    expect(badMode.status).toBe(400);
    expect(((await badMode.json()) as { error: string }).error).toMatch(/^mode must be one of error, timeout/);
    const get = await fetch(`${control}/providers/provider_02/fail`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  // Closing its terminal sends SIGHUP, handled as Ctrl-C (SIGINT) is: the same stop.
  it('stops when its terminal closes (SIGHUP) as on Ctrl-C, embedded database included', async () => {
    child.kill('SIGHUP');
    expect(await exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 30_000);
});

describe('npm run demo with a bad option', () => {
  it('refuses an unknown provider or failure in --fail, saying which, before it starts', async () => {
    const run = (fail: string) =>
      new Promise<{ code: number | null; err: string }>((resolve) => {
        const p = spawn(
          process.execPath,
          ['--import', 'tsx', 'scripts/demo.ts', '--control-port', '0', '--fail', fail],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
        let err = '';
        p.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
        p.once('exit', (code) => resolve({ code, err }));
      });
    const unknown = await run('provider_99');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^demo failed: --fail provider_99: no such provider \(one of provider_01, /m);
    const badFailure = await run('provider_02:explode');
    expect(badFailure.code).toBe(1);
    expect(badFailure.err).toContain(
      'demo failed: --fail provider_02:explode: the failure must be one of error, timeout, reset, garbage',
    );
  }, 60_000);
});

describe("the demo's configuration check", () => {
  it('lets DISABLED_PROVIDERS leave a provider out, and refuses one merely unconfigured', async () => {
    const fakes = await startFakes();
    try {
      const env = demoEnvironment(fakes.env, { port: '0', host: '127.0.0.1', dataDir: 'data/unused' });
      expect(() => checkEverythingLocal(parseConfig({ ...env, DISABLED_PROVIDERS: 'provider_04' }))).not.toThrow();
      expect(() => checkEverythingLocal(parseConfig({ ...env, STAAN_API_KEY: '' }))).toThrow(
        /provider_04 \(Staan\) is not configured/,
      );
      expect(() => checkEverythingLocal(parseConfig({ ...env, STAAN_BASE_URL: 'https://api.staan.ai/v2' }))).toThrow(
        /STAAN_BASE_URL is not a local fake: https:\/\/api\.staan\.ai\/v2/,
      );
    } finally {
      await fakes.close();
    }
  });
});
