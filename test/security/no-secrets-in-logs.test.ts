import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import type { FakeServer } from '../fakes/fake-server.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import {
  type LogCapture,
  type RunningApp,
  WebClient,
  allProvidersAt,
  captureLogs,
  startApp,
  startEchoUpstream,
} from './support.js';

/*
 * Every log line the app writes at trace level, while it is handed every kind
 * of secret it knows: passwords (right and wrong), session and CSRF cookies,
 * CSRF tokens, API keys (created, used in each way, tampered, revoked),
 * monitor tokens (query, header, bearer; right and wrong) and provider keys
 * sent to upstreams that echo the whole request back in their error bodies.
 * None of those secrets may appear in any line, nor in the recorded provider
 * errors, the status page or the status API.
 */

const PROVIDER_KEYS = {
  BRAVE_API_KEY: 'braveKEYa1b2c3d4e5f6',
  BRAVE_SUGGEST_API_KEY: 'braveSUGGESTz9y8x7w6',
  MOJEEK_API_KEY: 'mojeekKEY+in/query=1',
  MARGINALIA_API_KEY: 'marginaliaKEYq1w2e3r4',
  STAAN_API_KEY: 'staanBEARERt5y6u7i8',
  PIXABAY_API_KEY: 'pixabayKEYo9p0a1s2',
  WORLDNEWS_API_KEY: 'worldnewsKEYd3f4g5h6',
  THETVDB_API_KEY: 'thetvdbKEYj7k8l9z0',
  THETVDB_PIN: 'thetvdbPIN4242',
  TRIPADVISOR_API_KEY: 'tripadvisorKEYx1c2v3',
  STACKEXCHANGE_API_KEY: 'stackexchangeKEYb4n5m6',
  LIBRETRANSLATE_API_KEY: 'libretranslateKEYq7w8',
};
const MONITOR_TOKEN = 'monitorTOKENs3cr3t-value';
const WRONG_MONITOR_TOKEN = 'wrongMONITORtoken-guess';
const PASSWORD = 'very secret password 42';
const WRONG_PASSWORD = 'wrong secret password 17';

describe('no secret in any log line', () => {
  let db: TestDatabase;
  let echo: FakeServer;
  let logs: LogCapture;
  let server: RunningApp;
  /** Every secret the app was handed during the scenario. */
  const secrets = new Map<string, string>();

  beforeAll(async () => {
    db = await createTestDatabase();
    echo = await startEchoUpstream(500);
    logs = captureLogs({}, { LOG_QUERIES: true });
    server = await startApp(
      db,
      {
        ...allProvidersAt(echo.url),
        ...PROVIDER_KEYS,
        STATUS_MONITOR_TOKEN: MONITOR_TOKEN,
        // every failure is written at once
        PROBE_INTERVAL_SECONDS: '0',
      },
      logs.logger,
    );
    await createUser(db.pool, { username: 'alice', password: PASSWORD });
    for (const [name, value] of Object.entries(PROVIDER_KEYS)) secrets.set(name, value);
    secrets.set('monitor token', MONITOR_TOKEN);
    secrets.set('wrong monitor token', WRONG_MONITOR_TOKEN);
    secrets.set('password', PASSWORD);
    secrets.set('wrong password', WRONG_PASSWORD);

    const { base } = server;
    // Sign-in: a wrong password, then the right one (with a `next`), with the cookies the browser keeps.
    const client = new WebClient(base);
    expect((await client.signIn('alice', WRONG_PASSWORD)).status).toBe(401);
    expect((await client.signIn('alice', PASSWORD, '/settings/keys')).status).toBe(302);
    const sessionCookie = client.cookies.get('sift_session')!;
    const csrfCookie = client.cookies.get('sift_csrf')!;
    secrets.set('session cookie', sessionCookie);
    secrets.set('session id', decodeURIComponent(sessionCookie).split('.')[0]!);
    secrets.set('csrf cookie', csrfCookie);

    // Keys: create two, use them every way, tamper with one, revoke it, use it again.
    const page = await client.get('/settings/keys');
    const csrfToken = WebClient.csrfToken(page.text);
    secrets.set('csrf token', csrfToken);
    const keys: string[] = [];
    for (const name of ['laptop', 'server']) {
      const created = await client.post('/settings/keys', { _csrf: csrfToken, name });
      keys.push(/svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}/.exec(created.text)![0]);
    }
    keys.forEach((key, i) => {
      secrets.set(`API key ${i}`, key);
      secrets.set(`API key secret ${i}`, key.split('.')[1]!);
    });
    const [key, other] = keys as [string, string];
    const api = (path: string, headers: Record<string, string>) => fetch(`${base}${path}`, { headers });
    for (const path of ['/api/v1/', '/api/v1/key/', '/api/v1/status/']) {
      await api(path, { authorization: `Api-Key ${key}` });
      await api(path, { authorization: `Bearer ${other}` });
      await api(path, { 'x-api-key': key });
    }
    // keys in the places they do not belong: the query string, a cookie
    await api(`/api/v1/?api_key=${key}&key=${other}`, {});
    await api('/api/v1/', { cookie: `sift_session=${sessionCookie}; api_key=${key}` });
    await api('/api/v1/', { 'x-api-key': `${key.slice(0, 20)}tampered${key.slice(28)}` });
    const keyId = (await db.pool.query('SELECT id FROM api_keys ORDER BY id LIMIT 1')).rows[0].id;
    expect((await client.post(`/settings/keys/${keyId}/revoke`, { _csrf: csrfToken })).status).toBe(303);
    expect((await api('/api/v1/key/', { authorization: `Api-Key ${key}` })).status).toBe(401);

    // Searches: every engine and the suggestions fail against the echoing upstream.
    const searches = [
      '/api/v1/web/?q=echo+me',
      '/api/v1/web/?q=second+query&engine=provider_02',
      '/api/v1/suggest/?q=echo',
    ];
    for (const path of searches)
      expect((await api(path, { authorization: `Api-Key ${other}` })).status).toBeLessThan(600);
    // The active checks fail against it too.
    await server.app.health.probeNow();
    await server.app.health.recorder.flush();

    // Monitors: the right and a wrong token, in each of the three places.
    for (const token of [MONITOR_TOKEN, WRONG_MONITOR_TOKEN]) {
      for (const path of ['/status/health', '/status/health/', '/status/health/provider_01']) {
        await fetch(`${base}${path}?token=${encodeURIComponent(token)}`);
        await fetch(`${base}${path}?TOKEN=${token}&x=1`);
        await fetch(`${base}${path}?x=1&%74oken=${token}`);
        await fetch(`${base}${path}`, { headers: { 'x-monitor-token': token } });
        await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      }
      await fetch(`${base}/status/health?token=${token}`, { method: 'POST' });
      await fetch(`${base}/status/health%?token=${token}`);
    }

    // Secrets in bodies the app cannot parse: a sign-in and an API call with broken JSON.
    const broken = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    await broken('/login', `{"username": "alice", "password": "${PASSWORD}", `);
    await broken('/login', `{"username": "alice", "password": ${PASSWORD}}`);
    await broken('/api/v1/web/', `{"key": ${other}}`, { authorization: `Api-Key ${other}` });
    await broken('/status/health', `{"token": ${MONITOR_TOKEN}}`);

    // The pages with the session (and a stale one), then sign out.
    await client.get('/status');
    await client.get(`/status?token=${MONITOR_TOKEN}&password=${PASSWORD}`);
    const stale = new WebClient(base);
    stale.cookies.set('sift_session', sessionCookie);
    await client.post('/logout', { _csrf: csrfToken });
    await stale.get('/settings/keys');
    await server.app.lifecycle.flush();
  });

  afterAll(async () => {
    await server?.close();
    await echo?.close();
    await db?.drop();
  });

  it('really handed the secrets out: the upstreams received the provider keys and echoed them back', () => {
    const seen = echo.requests.map((r) => `${JSON.stringify(r.headers)} ${r.query.toString()} ${r.body}`).join('\n');
    const decoded = decodeURIComponent(seen.replace(/\+/g, ' '));
    for (const name of ['BRAVE_API_KEY', 'BRAVE_SUGGEST_API_KEY', 'MARGINALIA_API_KEY', 'STAAN_API_KEY'] as const) {
      expect(seen, name).toContain(PROVIDER_KEYS[name]);
    }
    expect(decoded).toContain(PROVIDER_KEYS.MOJEEK_API_KEY);
    expect(logs.lines().length).toBeGreaterThan(50);
    // the request lines are there (URLs of monitor calls and sign-ins included), just without the secrets
    expect(logs.text()).toContain('/status/health?token=[redacted]');
    expect(logs.text()).toContain('upstream call failed');
  });

  it('writes none of them in any log line, raw or URL-encoded', () => {
    const text = logs.text();
    for (const [name, value] of secrets) {
      for (const form of new Set([value, encodeURIComponent(value)])) {
        const at = text.indexOf(form);
        expect(at, `${name} in: ${text.slice(Math.max(0, at - 200), at + 100)}`).toBe(-1);
      }
    }
  });

  it('keeps the provider keys out of the recorded upstream errors, the status page and the status API', async () => {
    const { rows } = await db.pool.query<{ provider: string; last_error: string }>(
      'SELECT provider, last_error FROM provider_status WHERE NOT ok',
    );
    const failures = rows.map((r) => `${r.provider}: ${r.last_error}`).join('\n');
    // the echoed requests did reach the recorded errors, with the secrets cut out
    expect(failures).toContain('Rejected request.');
    expect(failures).toContain('[redacted]');

    const operator = new WebClient(server.base);
    await operator.signIn('alice', PASSWORD);
    const page = (await operator.get('/status')).text;
    expect(page).toContain('Rejected request.');
    const key = (await operator.post('/settings/keys', { _csrf: WebClient.csrfToken(page), name: 'status' })).text;
    const apiKey = /svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}/.exec(key)![0];
    const statusApi = await (
      await fetch(`${server.base}/api/v1/status/`, { headers: { authorization: `Api-Key ${apiKey}` } })
    ).text();
    for (const [name, value] of Object.entries(PROVIDER_KEYS)) {
      for (const where of [failures, page, statusApi]) {
        expect(where, name).not.toContain(value);
        expect(where, name).not.toContain(encodeURIComponent(value));
      }
    }
  });
});
