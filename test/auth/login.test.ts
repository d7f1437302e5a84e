import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { CLIENT_THRESHOLD } from '../../src/auth/login-throttle.js';
import { createUser, setUserActive } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { testConfig } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';
import { WebClient } from './web-client.js';

const GENERIC = 'Please enter a correct username and password.';

/** The app on a real port, with a pool that counts session-table queries. */
async function startApp(db: TestDatabase, env: Record<string, string> = {}) {
  const pool = createPool(db.url, { max: 10 });
  const sessionQueries: string[] = [];
  const originalQuery = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (/\bsessions\b/.test(text)) sessionQueries.push(text);
    return originalQuery(...args);
  };
  const app = await buildApp(testConfig(db, env), { pool: pool as pg.Pool, logger: false });
  const base = await listen(app);
  return {
    app,
    base,
    sessionQueries,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}

describe('sign-in, sessions and sign-out', () => {
  let db: TestDatabase;
  let server: Awaited<ReturnType<typeof startApp>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db);
    await createUser(db.pool, { username: 'alice', password: 'correct horse battery' });
    const bob = await createUser(db.pool, { username: 'bob', password: 'bobs password 1' });
    await setUserActive(db.pool, bob.id, false);
  });
  afterAll(async () => {
    await server.close();
    await db.drop();
  });

  it('shows a sign-in form with username, password and a CSRF token, at /login and /login/', async () => {
    for (const path of ['/login', '/login/']) {
      const page = await new WebClient(server.base).get(path);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.text).toMatch(/<form method="post" action="\/login"/);
      expect(page.text).toContain('name="username"');
      expect(page.text).toContain('name="password"');
      expect(WebClient.csrfToken(page.text).length).toBeGreaterThan(10);
    }
  });

  it('signs in, sets an httpOnly SameSite=Lax session cookie without Secure over HTTP, and redirects to /status', async () => {
    const client = new WebClient(server.base);
    const page = await client.get('/login');
    const res = await client.post('/login/', {
      _csrf: WebClient.csrfToken(page.text),
      username: 'Alice',
      password: 'correct horse battery',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/status');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sift_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);
    const keys = await client.get('/settings/keys');
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('<h1>API keys</h1>');
    const { rows } = await db.pool.query("SELECT last_login_at FROM users WHERE username = 'alice'");
    expect(rows[0].last_login_at).not.toBeNull();
  });

  it('answers a wrong password, an unknown user and a disabled user with the same generic message', async () => {
    const bodies: string[] = [];
    for (const [username, password] of [
      ['alice', 'wrong password!'],
      ['nobody-here', 'correct horse battery'],
      ['bob', 'bobs password 1'],
    ] as const) {
      const client = new WebClient(server.base);
      const res = await client.signIn(username, password);
      expect(res.status, username).toBe(401);
      expect(res.text).toContain(GENERIC);
      expect(res.text).toContain('name="_csrf"');
      expect(client.cookies.has('sift_session')).toBe(false);
      bodies.push(res.text.replace(/(value|nonce)="[^"]*"/g, ''));
    }
    expect(new Set(bodies).size).toBe(1);
  });

  it('refuses a sign-in without a valid CSRF token', async () => {
    const client = new WebClient(server.base);
    await client.get('/login');
    const res = await client.post('/login', { _csrf: 'forged', username: 'alice', password: 'correct horse battery' });
    expect(res.status).toBe(403);
    expect(client.cookies.has('sift_session')).toBe(false);
    const none = await new WebClient(server.base).post('/login', {
      username: 'alice',
      password: 'correct horse battery',
    });
    expect(none.status).toBe(403);
  });

  it('follows next only to a local path', async () => {
    const local = await new WebClient(server.base).signIn('alice', 'correct horse battery', '/settings/keys?x=1');
    expect(local.headers.get('location')).toBe('/settings/keys?x=1');
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const res = await new WebClient(server.base).signIn('alice', 'correct horse battery', evil);
      expect(res.status, evil).toBe(302);
      expect(res.headers.get('location'), evil).toBe('/status');
    }
  });

  it('gives a new session id at each sign-in; the old one stops working', async () => {
    const client = new WebClient(server.base);
    await client.signIn('alice', 'correct horse battery');
    const first = client.cookies.get('sift_session')!;
    const token = WebClient.csrfToken((await client.get('/settings/keys')).text);
    const again = await client.post('/login', { _csrf: token, username: 'alice', password: 'correct horse battery' });
    expect(again.status).toBe(302);
    const second = client.cookies.get('sift_session')!;
    expect(second).not.toBe(first);
    const stale = new WebClient(server.base);
    stale.cookies.set('sift_session', first);
    const res = await stale.get('/settings/keys');
    expect(res.status).toBe(302);
  });

  it('redirects anonymous visitors of a page to /login with next, and / by sign-in state', async () => {
    const anonymous = new WebClient(server.base);
    const keys = await anonymous.get('/settings/keys');
    expect(keys.status).toBe(302);
    expect(keys.headers.get('location')).toBe('/login?next=/settings/keys');
    expect((await anonymous.get('/')).headers.get('location')).toBe('/login');

    const signedIn = new WebClient(server.base);
    await signedIn.signIn('alice', 'correct horse battery');
    const home = await signedIn.get('/');
    expect(home.status).toBe(302);
    expect(home.headers.get('location')).toBe('/status');
    const loginAgain = await signedIn.get('/login');
    expect(loginAgain.status).toBe(302);
  });

  it('signs out with a CSRF-protected POST that ends the session', async () => {
    const client = new WebClient(server.base);
    await client.signIn('alice', 'correct horse battery');
    const cookie = client.cookies.get('sift_session')!;
    const page = await client.get('/settings/keys');
    const withoutToken = await client.post('/logout', {});
    expect(withoutToken.status).toBe(403);
    const res = await client.post('/logout', { _csrf: WebClient.csrfToken(page.text) });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login');
    const replay = new WebClient(server.base);
    replay.cookies.set('sift_session', cookie);
    expect((await replay.get('/settings/keys')).status).toBe(302);
  });

  it('ends the session of a user who is disabled after signing in', async () => {
    const carol = await createUser(db.pool, { username: 'carol', password: 'carols password' });
    const client = new WebClient(server.base);
    await client.signIn('carol', 'carols password');
    expect((await client.get('/settings/keys')).status).toBe(200);
    await setUserActive(db.pool, carol.id, false);
    expect((await client.get('/settings/keys')).status).toBe(302);
  });

  it('slows failed sign-ins per client and username: after 5 failures even the right password waits out a growing delay', async () => {
    await createUser(db.pool, { username: 'dora', password: 'doras password' });
    for (let i = 0; i < 5; i++) {
      const res = await new WebClient(server.base).signIn('dora', 'nope nope');
      expect(res.status).toBe(401);
    }
    const blocked = await new WebClient(server.base).signIn('dora', 'doras password');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.text).toMatch(/Too many failed sign-in attempts/);
    // the first block is short: once it is over, the right password works (and clears the count)
    await new Promise((r) => setTimeout(r, 1100));
    expect((await new WebClient(server.base).signIn('dora', 'doras password')).status).toBe(302);
    // an unknown username is slowed the same way, so the answer tells nothing about existence
    for (let i = 0; i < 5; i++) await new WebClient(server.base).signIn('no-such-user', 'nope nope');
    expect((await new WebClient(server.base).signIn('no-such-user', 'nope nope')).status).toBe(429);
  });

  it('never reads or writes sessions for API requests, even with a valid session cookie', async () => {
    const alice = (await db.pool.query("SELECT id FROM users WHERE username = 'alice'")).rows[0].id;
    const { key } = await issueApiKey(db.pool, Number(alice));
    const client = new WebClient(server.base);
    await client.signIn('alice', 'correct horse battery');
    server.sessionQueries.length = 0;
    const res = await client.request('/api/v1/', { headers: { authorization: `Api-Key ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(server.sessionQueries).toEqual([]);
    const anonymous = await client.request('/api/v1/');
    expect(anonymous.status).toBe(401);
  });
});

describe('cookies behind an HTTPS proxy', () => {
  let db: TestDatabase;
  let server: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db, { TRUST_PROXY: 'true', STATUS_PAGE_ENABLED: 'false' });
    await createUser(db.pool, { username: 'erin', password: 'erins password' });
  });
  afterAll(async () => {
    await server.close();
    await db.drop();
  });

  it('marks the session cookie Secure when the proxy says HTTPS, and lands on the keys page without the status page', async () => {
    const client = new WebClient(server.base, { 'x-forwarded-proto': 'https' });
    const res = await client.signIn('erin', 'erins password');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/settings/keys');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sift_session='))!;
    expect(cookie).toMatch(/;\s*Secure/i);
  });

  it('slows failed sign-ins per client IP across usernames, leaving other IPs alone', async () => {
    for (let i = 0; i < CLIENT_THRESHOLD; i++) {
      const res = await new WebClient(server.base, { 'x-forwarded-for': '203.0.113.9' }).signIn(
        `guess${i}`,
        'nope nope',
      );
      expect(res.status).toBe(401);
    }
    const sameIp = await new WebClient(server.base, { 'x-forwarded-for': '203.0.113.9' }).signIn(
      'erin',
      'erins password',
    );
    expect(sameIp.status).toBe(429);
    const otherIp = await new WebClient(server.base, { 'x-forwarded-for': '203.0.113.10' }).signIn(
      'erin',
      'erins password',
    );
    expect(otherIp.status).toBe(302);
  });
});
