import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_THRESHOLD, CLIENT_USER_THRESHOLD } from '../../src/auth/login-throttle.js';
import { createUser } from '../../src/auth/users.js';
import { launchBrowser } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type RunningApp, WebClient, startApp } from './support.js';

/*
 * Session fixation, CSRF on every form, the sign-in throttle and the `next`
 * parameter of the sign-in page.
 */

const PASSWORD = 'forms test password';
const KEY = /svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}/;

async function signedIn(base: string, username = 'alice'): Promise<WebClient> {
  const client = new WebClient(base);
  const res = await client.signIn(username, PASSWORD);
  expect(res.status).toBe(302);
  return client;
}

describe('sessions, CSRF and the next parameter', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db);
    for (const username of ['alice', 'mallory']) await createUser(db.pool, { username, password: PASSWORD });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const keyCount = async (name?: string) =>
    Number(
      (await db.pool.query('SELECT count(*) FROM api_keys WHERE $1::text IS NULL OR name = $1', [name ?? null])).rows[0]
        .count,
    );

  describe('session fixation', () => {
    it('never keeps a session id planted before sign-in: a forged one is replaced and grants nothing', async () => {
      const victim = new WebClient(server.base);
      const planted = 'attacker-chosen-session-id-0123456789abcdef';
      victim.cookies.set('sift_session', planted);
      const res = await victim.signIn('alice', PASSWORD);
      expect(res.status).toBe(302);
      const issued = victim.cookies.get('sift_session')!;
      expect(decodeURIComponent(issued)).not.toContain(planted);
      const { rows } = await db.pool.query('SELECT 1 FROM sessions WHERE sid = $1', [planted]);
      expect(rows).toHaveLength(0);
      const attacker = new WebClient(server.base);
      attacker.cookies.set('sift_session', planted);
      expect((await attacker.get('/settings/keys')).status).toBe(302);
    });

    it('rotates a real session planted by an attacker: once the victim signs in, the attacker’s copy is dead', async () => {
      const attacker = await signedIn(server.base, 'mallory');
      const planted = attacker.cookies.get('sift_session')!;
      const victim = new WebClient(server.base);
      victim.cookies.set('sift_session', planted);
      const token = WebClient.csrfToken((await victim.get('/settings/keys')).text);
      const res = await victim.post('/login', { _csrf: token, username: 'alice', password: PASSWORD });
      expect(res.status).toBe(302);
      expect(victim.cookies.get('sift_session')).not.toBe(planted);
      // the victim's session is alice's ...
      const created = await victim.post('/settings/keys', { _csrf: token, name: 'fixation check' });
      expect(created.status).toBe(200);
      const owner = await db.pool.query(
        "SELECT u.username FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.name = 'fixation check'",
      );
      expect(owner.rows).toEqual([{ username: 'alice' }]);
      // ... and the attacker's copy of the old id opens nothing
      expect((await attacker.get('/settings/keys')).status).toBe(302);
    });
  });

  describe('CSRF', () => {
    it('refuses a sign-in without a token, with a wrong one, with another visitor’s, or without the CSRF cookie', async () => {
      const other = new WebClient(server.base);
      const otherToken = WebClient.csrfToken((await other.get('/login')).text);
      const attempts: [string, (c: WebClient) => Record<string, string>][] = [
        ['no token', () => ({})],
        ['empty token', () => ({ _csrf: '' })],
        ['wrong token', () => ({ _csrf: 'x'.repeat(52) })],
        ["another visitor's token", () => ({ _csrf: otherToken })],
      ];
      for (const [what, token] of attempts) {
        const client = new WebClient(server.base);
        await client.get('/login');
        const res = await client.post('/login', { ...token(client), username: 'alice', password: PASSWORD });
        expect(res.status, what).toBe(403);
        expect(client.cookies.has('sift_session'), what).toBe(false);
      }
      const noCookie = new WebClient(server.base);
      const token = WebClient.csrfToken((await noCookie.get('/login')).text);
      noCookie.cookies.delete('sift_csrf');
      const res = await noCookie.post('/login', { _csrf: token, username: 'alice', password: PASSWORD });
      expect(res.status).toBe(403);
      expect(noCookie.cookies.has('sift_session')).toBe(false);
    });

    it('refuses creating a key, revoking one and signing out without a valid token, and changes nothing', async () => {
      const alice = await signedIn(server.base);
      const aliceToken = WebClient.csrfToken((await alice.get('/settings/keys')).text);
      const created = await alice.post('/settings/keys', { _csrf: aliceToken, name: 'keep me' });
      const key = KEY.exec(created.text)![0];
      const keyId = (await db.pool.query("SELECT id FROM api_keys WHERE name = 'keep me'")).rows[0].id;
      const mallory = await signedIn(server.base, 'mallory');
      const malloryToken = WebClient.csrfToken((await mallory.get('/settings/keys')).text);

      const before = await keyCount();
      for (const [what, form] of [
        ['no token', {}],
        ['wrong token', { _csrf: 'forged-token' }],
        ["another user's token", { _csrf: malloryToken }],
      ] as const) {
        const create = await alice.post('/settings/keys', { ...form, name: 'csrf' });
        expect(create.status, what).toBe(403);
        expect(create.text, what).not.toMatch(KEY);
        const revoke = await alice.post(`/settings/keys/${keyId}/revoke`, { ...form });
        expect(revoke.status, what).toBe(403);
        const logout = await alice.post('/logout', { ...form });
        expect(logout.status, what).toBe(403);
      }
      expect(await keyCount()).toBe(before);
      expect(
        (await db.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId])).rows[0].revoked_at,
      ).toBeNull();
      expect((await fetch(`${server.base}/api/v1/key/`, { headers: { authorization: `Api-Key ${key}` } })).status).toBe(
        200,
      );
      // still signed in, and the right token still works
      expect((await alice.get('/settings/keys')).status).toBe(200);
      expect((await alice.post(`/settings/keys/${keyId}/revoke`, { _csrf: aliceToken })).status).toBe(303);
    });

    it('refuses a form another site submits in the victim’s browser (no key is created)', async () => {
      const evil = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><form id="f" method="post" action="${server.base}/settings/keys">
          <input name="name" value="planted-by-evil"><input name="_csrf" value="guess"></form>
          <script>document.getElementById('f').submit()</script>`);
      });
      await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
      // another site: "localhost" is not the same site as "127.0.0.1"
      const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(`${server.base}/login`);
        await page.fill('#username', 'alice');
        await page.fill('#password', PASSWORD);
        await Promise.all([page.waitForURL(`${server.base}/status`), page.click('button[type=submit]')]);
        const answered = page.waitForResponse((r) => r.url() === `${server.base}/settings/keys`);
        await page.goto(evilUrl);
        const response = await answered;
        expect(response.status()).not.toBe(200);
        expect(await keyCount('planted-by-evil')).toBe(0);
      } finally {
        await browser.close();
        await new Promise((r) => evil.close(r));
      }
    });
  });

  describe('next', () => {
    const HOSTILE = [
      '//evil.example',
      '//evil.example/path',
      '///evil.example',
      'https://evil.example/',
      'HTTPS://evil.example',
      'http:evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '/\\/evil.example',
      '\\/evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      ' //evil.example',
      // resolved, each of these is //evil.example (or /\\evil.example)
      '/.//evil.example',
      '/..//evil.example',
      '/./..//evil.example',
      '/a/..//evil.example',
      '/%2E//evil.example',
      '/.%2e//evil.example',
      '/%2e%2E//evil.example',
      '/.\\evil.example',
      '/..\\/evil.example',
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'evil.example',
      '/login',
      '/logout',
    ];

    it('signs in to the default page when next is not a local path', async () => {
      for (const next of HOSTILE) {
        const res = await new WebClient(server.base).signIn('alice', PASSWORD, next);
        expect(res.status, JSON.stringify(next)).toBe(302);
        expect(res.headers.get('location'), JSON.stringify(next)).toBe('/status');
      }
    });

    it('neither redirects a signed-in visitor off-site nor carries the value into the form', async () => {
      const alice = await signedIn(server.base);
      for (const next of HOSTILE) {
        const res = await alice.get(`/login?next=${encodeURIComponent(next)}`);
        expect(res.status, JSON.stringify(next)).toBe(302);
        expect(res.headers.get('location'), JSON.stringify(next)).toBe('/status');
        const form = await new WebClient(server.base).get(`/login?next=${encodeURIComponent(next)}`);
        expect(form.text, JSON.stringify(next)).not.toContain('name="next"');
      }
    });

    it('follows local paths, encoded look-alikes staying on this site', async () => {
      for (const [next, expected] of [
        ['/settings/keys', '/settings/keys'],
        ['/settings/keys?tab=1#new', '/settings/keys?tab=1#new'],
        ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
        ['/%5Cevil.example', '/%5Cevil.example'],
        ['/／evil.example', '/%EF%BC%8Fevil.example'],
        ['/a/../../evil.example', '/evil.example'],
      ]) {
        const res = await new WebClient(server.base).signIn('alice', PASSWORD, next);
        expect(res.status, next).toBe(302);
        const location = res.headers.get('location')!;
        expect(location, next).toBe(expected);
        expect(new URL(location, server.base).origin).toBe(server.base);
      }
    });
  });
});

describe('the sign-in throttle', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db, { TRUST_PROXY: 'true' });
    for (const username of ['alice', 'bob', 'carol']) await createUser(db.pool, { username, password: PASSWORD });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const attempt = (username: string, password: string, ip: string) =>
    new WebClient(server.base, { 'x-forwarded-for': ip }).signIn(username, password);

  it('locks a username for a client after its repeated failures, whatever the case or spacing, even against the right password', async () => {
    const spellings = ['alice', 'ALICE', ' Alice ', 'aLiCe'];
    for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) {
      expect((await attempt(spellings[i % spellings.length]!, `guess ${i}`, '198.51.100.1')).status).toBe(401);
    }
    const blocked = await attempt('alice', PASSWORD, '198.51.100.1');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.headers.getSetCookie().some((c) => c.startsWith('sift_session='))).toBe(false);
    // other users are not affected
    expect((await attempt('bob', PASSWORD, '198.51.100.1')).status).toBe(302);
    // nor is alice from another client: one client's guesses lock nobody else out
    expect((await attempt('alice', PASSWORD, '198.51.100.2')).status).toBe(302);
  });

  it('never lets guesses from many clients lock a user out: each client is counted alone', async () => {
    for (let i = 0; i < 3 * CLIENT_USER_THRESHOLD; i++) {
      expect((await attempt('carol', `guess ${i}`, `198.51.100.${i + 10}`)).status, `client ${i}`).toBe(401);
    }
    expect((await attempt('carol', PASSWORD, '198.51.100.200')).status).toBe(302);
  });

  it('counts guesses sent in parallel like guesses sent one after another, and the right password then waits too', async () => {
    // Each guess with its own form (a CSRF token and its cookie), then every POST at once.
    const forms = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const client = new WebClient(server.base, { 'x-forwarded-for': '192.0.2.50' });
        const page = await client.get('/login');
        return { client, csrf: WebClient.csrfToken(page.text) };
      }),
    );
    const answers = await Promise.all(
      forms.map(({ client, csrf }, i) =>
        client.post('/login', { _csrf: csrf, username: 'bob', password: `guess ${i}` }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(CLIENT_USER_THRESHOLD);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - CLIENT_USER_THRESHOLD);
    expect((await attempt('bob', PASSWORD, '192.0.2.50')).status).toBe(429);
    expect((await attempt('bob', PASSWORD, '192.0.2.51')).status).toBe(302);
  });

  it('answers an unknown username exactly like a known one, so the throttle tells nothing about accounts', async () => {
    const strip = (html: string) => html.replace(/(value|nonce)="[^"]*"/g, '').replace(/\d+ seconds?/g, 'N');
    const bodies: string[] = [];
    for (const username of ['carol', 'no-such-user']) {
      for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) await attempt(username, 'nope nope', '203.0.113.10');
      const res = await attempt(username, 'nope nope', '203.0.113.10');
      expect(res.status, username).toBe(429);
      bodies.push(strip(res.text).replace(username, 'USER'));
    }
    expect(bodies[0]).toBe(bodies[1]);
  });

  it('locks an address that guesses across many usernames, leaving other addresses alone', async () => {
    for (let i = 0; i < CLIENT_THRESHOLD; i++) {
      expect((await attempt(`spray-${i}`, 'nope nope', '192.0.2.7')).status).toBe(401);
    }
    expect((await attempt('bob', PASSWORD, '192.0.2.7')).status).toBe(429);
    expect((await attempt('bob', PASSWORD, '192.0.2.8')).status).toBe(302);
  });
});
