import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { CLIENT_USER_THRESHOLD } from '../../src/auth/login-throttle.js';
import { createUser } from '../../src/auth/users.js';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { proxyTrust } from '../../src/config/trust-proxy.js';
import { WebClient } from '../auth/web-client.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type RunningApp, startApp } from '../security/support.js';

/*
 * Each form of TRUST_PROXY docs/operations.md documents, end to end on a real server: the client address
 * ("what is my IP"), https from X-Forwarded-Proto (the API index's URLs), Secure cookies, and the
 * sign-in throttle keyed per client. The requests come from 127.0.0.1, as from a proxy on the same
 * host; two clients behind it are told apart only by what the proxy appends to X-Forwarded-For.
 * A change in what a dependency makes of a form fails here.
 */

const PASSWORD = 'proxy test password';
/** What a proxy sends on: a spoofed entry from the client first, then the client's own address. */
const CLIENT_A = '198.51.100.7, 203.0.113.5';
const CLIENT_B = '198.51.100.8, 203.0.113.6';

interface Form {
  value: string;
  /** The address Sift should see for CLIENT_A. */
  client: string;
  /** Whether X-Forwarded-Proto is believed. */
  https: boolean;
}

const FORMS: Form[] = [
  // every hop a proxy: the first entry, whoever wrote it
  { value: 'true', client: '198.51.100.7', https: true },
  // one proxy (the nearest hop, on loopback): the entry it appended
  { value: '1', client: '203.0.113.5', https: true },
  { value: '2', client: '198.51.100.7', https: true },
  // the proxy by its address, a CIDR, or a name
  { value: '127.0.0.1', client: '203.0.113.5', https: true },
  { value: '10.0.0.0/8, 127.0.0.0/8, ::1', client: '203.0.113.5', https: true },
  { value: 'loopback', client: '203.0.113.5', https: true },
  // a proxy named elsewhere: this peer is a client, its headers are ignored
  { value: '10.0.0.0/8', client: '127.0.0.1', https: false },
  { value: 'false', client: '127.0.0.1', https: false },
  { value: '0', client: '127.0.0.1', https: false },
];

let db: TestDatabase;
let apiKey: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const alice = await createUser(db.pool, { username: 'alice', password: PASSWORD });
  ({ key: apiKey } = await issueApiKey(db.pool, alice.id));
});
afterAll(async () => {
  await db?.drop();
});

describe.each(FORMS)('TRUST_PROXY=$value', (form) => {
  let server: RunningApp;
  beforeAll(async () => {
    await db.pool.query('DELETE FROM sign_in_attempts');
    server = await startApp(db, { TRUST_PROXY: form.value, API_THROTTLE_BURST: '1000/min' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const api = async (path: string, headers: Record<string, string>) => {
    const res = await fetch(server.base + path, { headers: { authorization: `Api-Key ${apiKey}`, ...headers } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it(`sees the client as ${form.client}`, async () => {
    const body = await api('/api/v1/instant/?q=my+ip', { 'x-forwarded-for': CLIENT_A });
    expect((body.answer as { ip: string }).ip).toBe(form.client);
  });

  it(`${form.https ? 'believes' : 'ignores'} X-Forwarded-Proto: https`, async () => {
    const index = await api('/api/v1/', { 'x-forwarded-for': CLIENT_A, 'x-forwarded-proto': 'https' });
    expect(String(index.web_search)).toMatch(form.https ? /^https:\/\// : /^http:\/\//);
  });

  it(`${form.https ? 'marks' : 'does not mark'} the session cookie Secure behind HTTPS`, async () => {
    const client = new WebClient(server.base, { 'x-forwarded-for': CLIENT_A, 'x-forwarded-proto': 'https' });
    const res = await client.signIn('alice', PASSWORD);
    expect(res.status).toBe(302);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sift_session='))!;
    if (form.https) expect(cookie).toMatch(/;\s*Secure/i);
    else expect(cookie).not.toMatch(/Secure/i);
  });

  const separate = form.client !== '127.0.0.1';
  it(`throttles sign-ins ${separate ? 'per client behind the proxy' : 'as one client (the proxy)'}`, async () => {
    for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) {
      const res = await new WebClient(server.base, { 'x-forwarded-for': CLIENT_A }).signIn('alice', `guess ${i}`);
      expect(res.status).toBe(401);
    }
    expect((await new WebClient(server.base, { 'x-forwarded-for': CLIENT_A }).signIn('alice', PASSWORD)).status).toBe(
      429,
    );
    const other = await new WebClient(server.base, { 'x-forwarded-for': CLIENT_B }).signIn('alice', PASSWORD);
    expect(other.status).toBe(separate ? 302 : 429);
  });
});

describe('TRUST_PROXY as a hop count, for a peer that is no nearby proxy', () => {
  let server: RunningApp;
  beforeAll(async () => {
    server = await startApp(db, { TRUST_PROXY: '1', API_THROTTLE_BURST: '1000/min' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const seen = async (remoteAddress: string) => {
    const res = await server.app.inject({
      url: '/api/v1/instant/?q=my+ip',
      remoteAddress,
      headers: { authorization: `Api-Key ${apiKey}`, 'x-forwarded-for': '203.0.113.5', 'x-forwarded-proto': 'https' },
    });
    const index = await server.app.inject({
      url: '/api/v1/',
      remoteAddress,
      headers: { authorization: `Api-Key ${apiKey}`, 'x-forwarded-proto': 'https' },
    });
    return { ip: res.json().answer.ip as string, https: String(index.json().web_search).startsWith('https://') };
  };

  it('ignores the headers of a client reaching Sift from a public address', async () => {
    expect(await seen('198.51.100.9')).toEqual({ ip: '198.51.100.9', https: false });
    expect(await seen('2001:db8::9')).toEqual({ ip: '2001:db8::9', https: false });
  });

  it('believes a proxy on a private or loopback address, also IPv4-mapped', async () => {
    for (const proxy of ['10.1.2.3', '172.16.0.9', '192.168.1.1', 'fd00::1', '::1', '::ffff:127.0.0.1']) {
      expect(await seen(proxy), proxy).toEqual({ ip: '203.0.113.5', https: true });
    }
  });
});

describe('TRUST_PROXY values', () => {
  it('stops the start on an entry that is no address, naming it', () => {
    for (const value of ['10.0.0.0/33', 'proxy.example', '10.0.0.0/8, nope', '::1/129', '10.0.0.0/255.0.0.0']) {
      let error: unknown;
      try {
        parseConfig({ TRUST_PROXY: value });
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems[0], value).toMatch(/^TRUST_PROXY: /);
    }
  });

  it('trusts nothing that is not an address', () => {
    const trust = proxyTrust(parseConfig({ TRUST_PROXY: '127.0.0.1' }).TRUST_PROXY);
    expect(trust).not.toBe(false);
    const fn = trust as Exclude<typeof trust, false>;
    expect(fn('127.0.0.1', 0)).toBe(true);
    expect(fn('127.0.0.1', 3)).toBe(true);
    for (const junk of ['', 'unknown', '127.0.0.1:80', 'localhost']) expect(fn(junk, 0), junk).toBe(false);
    const hops = proxyTrust(2) as Exclude<typeof trust, false>;
    expect([hops('10.0.0.1', 0), hops('203.0.113.1', 1), hops('203.0.113.1', 2)]).toEqual([true, true, false]);
    expect(hops('garbage', 0)).toBe(false);
  });
});
