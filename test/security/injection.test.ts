import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { type WebFakes, startWebFakes } from '../fakes/index.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type RunningApp, WebClient, startApp } from './support.js';

/*
 * Hostile values in every parameter of the pages (query strings, form fields,
 * path segments, cookies, headers) and of a sample of API endpoints: SQL
 * metacharacters, markup, NUL and other control characters, template
 * syntax, broken encodings and very long strings. No answer is a 500; what is
 * stored is stored as given; what is echoed is escaped.
 */

const PASSWORD = 'injection test password';
const LONG = 'A'.repeat(6_000);

/** Values for form fields and query parameters (any string). */
const PAYLOADS: Record<string, string> = {
  'SQL quote': "' OR '1'='1' --",
  'SQL statement': "x'); DROP TABLE users; --",
  'SQL comment and semicolon': '1; SELECT pg_sleep(5); /*',
  'script tag': '<script>alert(1)</script>',
  'attribute breakout': '"><img src=x onerror=alert(1)>',
  'single-quote breakout': "'><svg onload=alert(1)>",
  NUL: 'a\u0000b',
  'only NUL': '\u0000',
  'control characters': 'x\u0001\u0008\u001b[31m\u007f',
  'CRLF header injection': 'x\r\nSet-Cookie: evil=1\r\nLocation: https://evil.example',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${} is the payload
  'template syntax': '<%= it.csrfToken %>{{7*7}}${7*7}<%~ process.exit() %>',
  'path traversal': '../../../../etc/passwd',
  'percent escapes': '%00%0d%0a%3Cscript%3E%',
  unicode: 'Ω≈ç√ 😀 \u202eevil\u202c \ufeff',
  'lone surrogate': 'x\ud800y',
  'very long': LONG,
};

/** Values that can travel in an HTTP header (printable Latin-1 only). */
const HEADER_PAYLOADS = Object.entries(PAYLOADS)
  .filter(([, v]) => /^[\u0020-\u007e\u00a0-\u00ff]*$/.test(v))
  .map(([name, v]) => [name, v] as const);

const MARKUP = ['<script>alert(1)</script>', '<img src=x', '<svg onload', '<%~ process'];

/** Raw markup from a payload must never reach the HTML, nor a payload's line break a header. */
function expectEscaped(res: { text: string; headers: Headers }, what: string) {
  for (const marker of MARKUP) expect(res.text.includes(marker), `${what}: raw ${marker}`).toBe(false);
  expect(res.headers.getSetCookie().join('\n'), what).not.toContain('evil');
  expect(res.headers.get('location') ?? '', what).not.toContain('evil');
}

function expectNot500(status: number, what: string) {
  expect(status, what).toBeGreaterThanOrEqual(200);
  expect(status, what).toBeLessThan(500);
}

/** The query-string form of a value; a lone surrogate (which encodeURIComponent refuses) as the raw bytes a client could send. */
function q(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value.replace(/[\ud800-\udfff]/g, '%ED%A0%80').replace(/[^%\w]/g, (c) => encodeURIComponent(c));
  }
}

describe('injection attempts in every parameter', () => {
  let db: TestDatabase;
  let fakes: WebFakes;
  let server: RunningApp;
  let alice: WebClient;
  let token: string;
  let apiKey: string;
  let aliceId: number;
  let ip = 0;
  /** A fresh client address per sign-in attempt, so the throttle never answers in place of the form. */
  const nextIp = () => `10.9.${Math.floor(++ip / 250)}.${(ip % 250) + 1}`;

  beforeAll(async () => {
    db = await createTestDatabase();
    fakes = await startWebFakes();
    server = await startApp(db, {
      ...fakes.env,
      TRUST_PROXY: 'true',
      STATUS_MONITOR_TOKEN: 'injection-monitor-token',
      API_THROTTLE_BURST: '100000/min',
      API_THROTTLE_SUSTAINED: '1000000/day',
    });
    aliceId = (await createUser(db.pool, { username: 'alice', password: PASSWORD })).id;
    await createUser(db.pool, { username: 'bob', password: PASSWORD });
    alice = new WebClient(server.base, { 'x-forwarded-for': '10.0.0.1' });
    expect((await alice.signIn('alice', PASSWORD)).status).toBe(302);
    token = WebClient.csrfToken((await alice.get('/settings/keys')).text);
    apiKey = (await issueApiKey(db.pool, aliceId, 'api')).key;
  });
  afterAll(async () => {
    await server?.close();
    await fakes?.close();
    await db?.drop();
  });

  it('sign-in form: hostile username, password, next and CSRF token are refused cleanly and echoed escaped', async () => {
    for (const [name, value] of Object.entries(PAYLOADS)) {
      const client = new WebClient(server.base, { 'x-forwarded-for': nextIp() });
      const form = await client.get(`/login?next=${q(value)}`);
      expectNot500(form.status, `GET /login?next= ${name}`);
      expectEscaped(form, `GET /login?next= ${name}`);
      const csrf = WebClient.csrfToken(form.text);
      const attempts: Record<string, string>[] = [
        { username: value, password: 'some password' },
        { username: 'alice', password: value },
        { username: value, password: value },
        { username: 'bob', password: 'wrong password', next: value },
      ];
      for (const fields of attempts) {
        const what = `POST /login ${name} in ${Object.keys(fields).join('+')}`;
        const res = await new WebClient(server.base, { 'x-forwarded-for': nextIp() }).request('/login', {
          form: { _csrf: csrf, ...fields },
          headers: { cookie: `sift_csrf=${client.cookies.get('sift_csrf')}` },
        });
        expectNot500(res.status, what);
        expect([400, 401], what).toContain(res.status);
        expectEscaped(res, what);
      }
      const forged = await client.post('/login', { _csrf: value, username: 'alice', password: PASSWORD });
      expect(forged.status, `forged token ${name}`).toBe(403);
      expectEscaped(forged, `forged token ${name}`);
      // alice and bob took one failure each: start the throttle afresh for the next payload
      await db.pool.query('DELETE FROM sign_in_attempts');
    }
    // the right credentials still work, and the users table is intact
    expect((await new WebClient(server.base, { 'x-forwarded-for': nextIp() }).signIn('alice', PASSWORD)).status).toBe(
      302,
    );
    expect((await db.pool.query('SELECT username FROM users ORDER BY id')).rows).toEqual([
      { username: 'alice' },
      { username: 'bob' },
    ]);
  });

  it('sign-in form: a hostile username shown back in the form keeps its value literally', async () => {
    const value = PAYLOADS['attribute breakout']!;
    const client = new WebClient(server.base, { 'x-forwarded-for': nextIp() });
    const res = await client.signIn(value, 'some password');
    expect(res.status).toBe(401);
    expect(res.text).toContain('value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
  });

  it('keys page: hostile key names are stored as given (or refused with a 400) and listed escaped', async () => {
    for (const [name, value] of Object.entries(PAYLOADS)) {
      const res = await alice.post('/settings/keys', { _csrf: token, name: value });
      expectNot500(res.status, `create ${name}`);
      expectEscaped(res, `create ${name}`);
      if (res.status === 200) {
        const stored = await db.pool.query(
          'SELECT name FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL ORDER BY id DESC LIMIT 1',
          [aliceId],
        );
        // as sent: a form carries a lone surrogate as U+FFFD
        expect(stored.rows[0].name, name).toBe(Buffer.from(value.trim()).toString() || 'API key');
      } else {
        expect(res.status, name).toBe(400);
        expect(res.text, name).toMatch(/role="alert"/);
      }
      // keep under the active-key limit
      await db.pool.query("UPDATE api_keys SET revoked_at = now() WHERE user_id = $1 AND name <> 'api'", [aliceId]);
    }
    const page = await alice.get('/settings/keys');
    expect(page.status).toBe(200);
    expectEscaped(page, 'keys page listing every hostile name');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('keys page: hostile key ids, query strings, and tokens on revoke and sign-out never answer 500', async () => {
    for (const [name, value] of Object.entries(PAYLOADS)) {
      const revoke = await alice.post(`/settings/keys/${q(value)}/revoke`, { _csrf: token });
      expectNot500(revoke.status, `revoke id ${name}`);
      const forged = await alice.post('/settings/keys/1/revoke', { _csrf: value });
      expect(forged.status, `revoke token ${name}`).toBe(403);
      const logout = await alice.post('/logout', { _csrf: value });
      expect(logout.status, `logout token ${name}`).toBe(403);
      for (const path of ['/settings/keys', '/status', '/']) {
        const res = await alice.get(`${path}?${q(value)}=${q(value)}&next=${q(value)}`);
        expectNot500(res.status, `${path} query ${name}`);
        expectEscaped(res, `${path} query ${name}`);
      }
    }
    // a notice for a missing key, and alice is still signed in
    const page = await alice.get('/settings/keys');
    expect(page.status).toBe(200);
  });

  it('cookies and headers: hostile session and CSRF cookies, request ids, forwarded addresses and credentials', async () => {
    for (const [name, value] of HEADER_PAYLOADS) {
      for (const cookie of [`sift_session=${value}`, `sift_session=${q(value)}`, `sift_csrf=${q(value)}`]) {
        for (const path of ['/login', '/settings/keys', '/status']) {
          const res = await new WebClient(server.base).request(path, { headers: { cookie } });
          expectNot500(res.status, `${path} cookie ${name}`);
        }
        const post = await new WebClient(server.base).request('/login', {
          form: { _csrf: value, username: 'alice', password: PASSWORD },
          headers: { cookie },
        });
        expect(post.status, `POST /login cookie ${name}`).toBe(403);
      }
      const headers: Record<string, string>[] = [
        { 'x-request-id': value },
        { 'x-forwarded-for': value },
        { 'x-forwarded-proto': value },
        { authorization: value },
        { authorization: `Api-Key ${value}` },
        { authorization: `Bearer ${value}` },
        { 'x-api-key': value },
      ];
      for (const h of headers) {
        const what = `${Object.keys(h)[0]} ${name}`;
        const page = await new WebClient(server.base, h).get('/login');
        expectNot500(page.status, `/login ${what}`);
        expect(page.headers.get('x-request-id'), what).not.toBe(value);
        const api = await fetch(`${server.base}/api/v1/key/`, { headers: h });
        expectNot500(api.status, `/api/v1/key/ ${what}`);
        const health = await fetch(`${server.base}/status/health`, { headers: { ...h, 'x-monitor-token': value } });
        expect(health.status, `/status/health ${what}`).toBe(403);
      }
      // a sign-in from a hostile forwarded address is throttled and answered like any other
      const res = await new WebClient(server.base, { 'x-forwarded-for': value }).signIn('alice', 'wrong password');
      expect([401, 429], `sign-in from ${name}`).toContain(res.status);
    }
  });

  it('API: hostile values in every parameter of /web/ and /suggest/, and in the key, status and health endpoints', async () => {
    const auth = { authorization: `Api-Key ${apiKey}` };
    const call = async (path: string, headers: Record<string, string> = auth) => {
      const res = await fetch(`${server.base}${path}`, { headers });
      const text = await res.text();
      expectNot500(res.status, path.slice(0, 200));
      expect(res.headers.get('content-type'), path.slice(0, 200)).toMatch(/^application\/json/);
      expect(() => JSON.parse(text), path.slice(0, 200)).not.toThrow();
      return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
    };
    for (const [name, value] of Object.entries(PAYLOADS)) {
      const v = q(value);
      const web = await call(`/api/v1/web/?q=${v}`);
      expect([200, 400], `web q ${name}`).toContain(web.status);
      for (const param of ['engine', 'safe', 'lang', 'page', 'date']) {
        const res = await call(`/api/v1/web/?q=test&${param}=${v}`);
        expect([200, 400], `web ${param} ${name}`).toContain(res.status);
      }
      await call(`/api/v1/web/?q=test&${v}=${v}`);
      const suggest = await call(`/api/v1/suggest/?q=${v}`);
      expect([200, 400], `suggest ${name}`).toContain(suggest.status);
      await call(`/api/v1/key/?${v}=${v}`);
      await call(`/api/v1/status/?${v}=${v}`);
      await call(`/api/v1/${v}`);
      const health = await call(`/status/health/${v}?token=injection-monitor-token`, {});
      // 400: a path that is not valid percent-encoded UTF-8
      expect([400, 403, 404], `health provider ${name}`).toContain(health.status);
      const token = await call(`/status/health?token=${v}`, {});
      expect(token.status, `health token ${name}`).toBe(403);
    }
    // the engines received the hostile queries as data, and the key still works
    expect(fakes.brave.requests.length).toBeGreaterThan(0);
    expect((await call('/api/v1/key/')).status).toBe(200);
  });

  it('bodies: oversized and malformed form posts get a 4xx, not a 500', async () => {
    const huge = 'B'.repeat(300 * 1024);
    const cases: [string, RequestInit][] = [
      [
        'oversized form',
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `username=${huge}` },
      ],
      ['broken JSON', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username": "' }],
      ['JSON array', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2,3]' }],
      [
        'JSON with nested fields',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"username": {"$ne": 1}, "password": ["a"], "_csrf": {"x": 1}}',
        },
      ],
      ['unknown type', { method: 'POST', headers: { 'content-type': 'application/x-evil' }, body: 'x' }],
      [
        'repeated fields',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'username=a&username=b&_csrf=1&_csrf=2&next=/a&next=//evil',
        },
      ],
      [
        'bad percent-encoding',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'username=%E0%A4%A&password=%',
        },
      ],
    ];
    for (const [what, init] of cases) {
      for (const path of ['/login', '/settings/keys', '/settings/keys/1/revoke', '/logout']) {
        const res = await fetch(`${server.base}${path}`, {
          ...init,
          headers: {
            ...(init.headers as Record<string, string>),
            cookie: [...alice.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
          },
        });
        expectNot500(res.status, `${what} to ${path}`);
        expect(res.status, `${what} to ${path}`).toBeGreaterThanOrEqual(400);
      }
    }
    // alice's session survived it all
    expect((await alice.get('/settings/keys')).status).toBe(200);
  });
});
