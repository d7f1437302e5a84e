import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createApiKeyAuthenticator, type KeyRow } from '../../src/auth/api-key-auth.js';
import { hashSecret } from '../../src/auth/key-format.js';
import { createLastUsedRecorder } from '../../src/auth/last-used.js';
import { issueApiKey, revokeApiKey } from '../../src/auth/api-keys.js';
import { createUser, setUserActive } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { type TestApp, buildTestApp, testConfig } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

const NOT_PROVIDED = { detail: 'Authentication credentials were not provided.' };
const INVALID = { detail: 'Invalid or revoked API key.' };

describe('API key authentication on /api/v1/', () => {
  let db: TestDatabase;
  let t: TestApp;
  let alice: { id: number };
  let key: string;
  let prefix: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db);
    alice = await createUser(db.pool, { username: 'alice', password: 'correct horse battery' });
    ({ key, prefix } = await issueApiKey(db.pool, alice.id, 'laptop'));
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

  it('answers 401 "not provided" with WWW-Authenticate when no key is sent', async () => {
    const res = await get('/api/v1/');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(NOT_PROVIDED);
    expect(res.headers['www-authenticate']).toBe('Api-Key');
  });

  it('treats an unrecognised Authorization scheme or an empty X-Api-Key as no key', async () => {
    const variants: Record<string, string>[] = [
      { authorization: 'Basic YTpi' },
      { authorization: 'Token abc' },
      { 'x-api-key': '' },
    ];
    for (const headers of variants) {
      const res = await get('/api/v1/', headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(NOT_PROVIDED);
    }
  });

  it('accepts the key as Api-Key, Bearer (any case) and X-Api-Key, with or without the brand', async () => {
    const variants: Record<string, string>[] = [
      { authorization: `Api-Key ${key}` },
      { authorization: `api-key ${key}` },
      { authorization: `Bearer ${key}` },
      { authorization: `bearer ${key}` },
      { 'x-api-key': key },
      { authorization: `Api-Key ${key.slice('svc_sk_'.length)}` },
    ];
    for (const headers of variants) {
      const res = await get('/api/v1/key/', headers);
      expect(res.statusCode, JSON.stringify(Object.keys(headers))).toBe(200);
      expect(res.json().prefix).toBe(`svc_sk_${prefix}`);
    }
  });

  it('answers 401 "invalid or revoked" for malformed, unknown and wrong keys', async () => {
    const wrongSecret = `${key.slice(0, -4)}AAAA` === key ? `${key.slice(0, -4)}BBBB` : `${key.slice(0, -4)}AAAA`;
    for (const presented of ['garbage', 'svc_sk_zzzzzzzz.abc', `svc_sk_00000000.${key.split('.')[1]}`, wrongSecret]) {
      const res = await get('/api/v1/', { authorization: `Api-Key ${presented}` });
      expect(res.statusCode, presented).toBe(401);
      expect(res.json()).toEqual(INVALID);
      expect(res.headers['www-authenticate']).toBe('Api-Key');
    }
  });

  it('answers 401 for a revoked key', async () => {
    const revoked = await issueApiKey(db.pool, alice.id, 'old');
    await revokeApiKey(db.pool, revoked.id);
    const res = await get('/api/v1/', { authorization: `Api-Key ${revoked.key}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID);
  });

  it('answers 403 for a valid key whose owner is disabled, and 401 for a wrong key of that owner', async () => {
    const bob = await createUser(db.pool, { username: 'bob' });
    const bobKey = await issueApiKey(db.pool, bob.id);
    await setUserActive(db.pool, bob.id, false);
    const res = await get('/api/v1/', { 'x-api-key': bobKey.key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ detail: 'User account is disabled.' });
    const wrong = await get('/api/v1/', { 'x-api-key': `${bobKey.key.slice(0, 16)}wrongwrongwrong` });
    expect(wrong.statusCode).toBe(401);
  });

  it('authenticates before routing: an unknown API path is 401 without a key and 404 with one', async () => {
    const anonymous = await get('/api/v1/no-such-endpoint/?page=zzz');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual(NOT_PROVIDED);
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/v1/no-such-endpoint/',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(post.statusCode).toBe(401);
    const known = await get('/api/v1/no-such-endpoint/', { authorization: `Api-Key ${key}` });
    expect(known.statusCode).toBe(404);
    expect(known.json()).toEqual({ detail: 'Not found.' });
  });

  it('lists every endpoint as an absolute URL in the root index', async () => {
    const res = await get('/api/v1/', { authorization: `Api-Key ${key}`, host: 'search.example:8443' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual([
      'web_search',
      'image_search',
      'similar_image_search',
      'news_search',
      'video_search',
      'maps',
      'translate',
      'translate_languages',
      'instant',
      'cards',
      'suggest',
      'status',
      'key',
    ]);
    // Where the server listens (PUBLIC_URL unset), never the Host the request claimed.
    const base = `http://${t.config.HOST}:${t.config.PORT}/api/v1/`;
    expect(body.web_search).toBe(`${base}web/`);
    expect(body.translate_languages).toBe(`${base}translate/languages/`);
    expect(body.status).toBe(`${base}status/`);
    expect(body.key).toBe(`${base}key/`);
    const noSlash = await get('/api/v1', { authorization: `Api-Key ${key}`, host: 'search.example:8443' });
    expect(noSlash.statusCode).toBe(200);
    expect(noSlash.json()).toEqual(body);
    expect((await get('/api/v1')).statusCode).toBe(401);
  });

  it('describes the key in use without its secret', async () => {
    const res = await get('/api/v1/key/', { authorization: `Api-Key ${key}` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ name: 'laptop', prefix: `svc_sk_${prefix}`, revoked: false });
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(res.body).not.toContain(key.split('.')[1]);
  });

  it('records last_used_at off the response path, at most once a minute', async () => {
    const fresh = await issueApiKey(db.pool, alice.id, 'fresh');
    const lastUsed = async () =>
      (await db.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [fresh.id])).rows[0]
        .last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();
    await get('/api/v1/', { authorization: `Api-Key ${fresh.key}` });
    await expect.poll(lastUsed, { timeout: 3000 }).not.toBeNull();
    const first = (await lastUsed())!.getTime();
    await new Promise((r) => setTimeout(r, 50));
    await get('/api/v1/', { authorization: `Api-Key ${fresh.key}` });
    await t.app.lifecycle.flush();
    expect((await lastUsed())!.getTime()).toBe(first);
    const described = await get('/api/v1/key/', { authorization: `Api-Key ${fresh.key}` });
    expect(new Date(described.json().last_used_at).getTime()).toBe(first);
  });

  it('writes a first use at once, and the keys first used in the second after it together in one statement', async () => {
    const keys: Awaited<ReturnType<typeof issueApiKey>>[] = [];
    for (const i of [1, 2, 3, 4]) keys.push(await issueApiKey(db.pool, alice.id, `batch ${i}`));
    const { pool: counting, queries } = countingQueries(db.pool);
    const recorder = createLastUsedRecorder(counting, (err: unknown) => {
      throw err;
    });
    /** Whether each key (in `keys` order) has a last_used_at. */
    const lastUsed = async () => {
      const { rows } = await db.pool.query('SELECT id, last_used_at FROM api_keys WHERE id = ANY($1::bigint[])', [
        keys.map((k) => k.id),
      ]);
      const used = new Map(rows.map((r) => [Number(r.id), r.last_used_at !== null]));
      return keys.map((k) => used.get(Number(k.id)));
    };
    recorder.touch(keys[0]!.id);
    expect(queries()).toBe(1);
    await expect.poll(lastUsed, { timeout: 500 }).toEqual([true, false, false, false]);
    // Within the second after that write: waiting, then written together.
    recorder.touch(keys[1]!.id);
    recorder.touch(keys[2]!.id);
    recorder.touch(keys[0]!.id);
    expect(queries()).toBe(1);
    await expect.poll(lastUsed, { timeout: 3000 }).toEqual([true, true, true, false]);
    expect(queries()).toBe(2);
    // A flush writes what waits without waiting for the window to close.
    recorder.touch(keys[3]!.id);
    await recorder.flush();
    expect(queries()).toBe(3);
    expect(await lastUsed()).toEqual([true, true, true, true]);
  });

  it('never loads a session or sets a cookie on API requests', async () => {
    const res = await get('/api/v1/', { authorization: `Api-Key ${key}`, cookie: 'sift_session=forged.value' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});

describe('API root index without the status page', () => {
  let db: TestDatabase;
  let t: TestApp;
  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db, { STATUS_PAGE_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  it('leaves out status when STATUS_PAGE_ENABLED=false', async () => {
    const user = await createUser(db.pool, { username: 'carol' });
    const { key } = await issueApiKey(db.pool, user.id);
    const res = await t.app.inject({ url: '/api/v1/', headers: { authorization: `Api-Key ${key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('status');
    expect(res.json()).toHaveProperty('key');
  });
});

/** The pool, counting the queries sent through it. */
function countingQueries(pool: pg.Pool): { pool: pg.Pool; queries: () => number } {
  let n = 0;
  const counting = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (...args: unknown[]) => {
          n++;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { pool: counting, queries: () => n };
}

describe('the key cache (no database: the admission statement looks up what it misses)', () => {
  const row = (secret: string, overrides: Partial<KeyRow> = {}): KeyRow => ({
    keyId: 7,
    prefix: '0a1b2c3d',
    userId: 3,
    username: 'dave',
    secretHash: hashSecret(secret),
    userActive: true,
    ...overrides,
  });
  const presented = (secret: string) => `svc_sk_0a1b2c3d.${secret}`;

  it('asks for a lookup of a key it has not seen, then answers from what it was told', () => {
    const cache = createApiKeyAuthenticator();
    const first = cache.identify(presented('right'));
    expect(first.kind).toBe('unknown');
    if (first.kind !== 'unknown') return;
    expect(first.prefix).toBe('0a1b2c3d');
    expect(first.secretHash.equals(hashSecret('right'))).toBe(true);
    cache.remember(first, row('right'));
    expect(cache.identify(presented('right'))).toEqual({
      kind: 'ok',
      principal: { keyId: 7, prefix: '0a1b2c3d', userId: 3, username: 'dave' },
    });
  });

  it('checks every secret against the cached hash: a wrong one is invalid, the right one still accepted', () => {
    const cache = createApiKeyAuthenticator();
    const asked = cache.identify(presented('right'));
    if (asked.kind !== 'unknown') throw new Error('expected a lookup');
    cache.remember(asked, row('right'));
    expect(cache.identify(presented('wrong'))).toEqual({ kind: 'invalid' });
    expect(cache.identify(presented('right')).kind).toBe('ok');
  });

  it('says disabled only to the right secret of a disabled user’s key', () => {
    const cache = createApiKeyAuthenticator();
    const asked = cache.identify(presented('right'));
    if (asked.kind !== 'unknown') throw new Error('expected a lookup');
    cache.remember(asked, row('right', { userActive: false }));
    expect(cache.identify(presented('right'))).toEqual({ kind: 'disabled' });
    expect(cache.identify(presented('wrong'))).toEqual({ kind: 'invalid' });
  });

  it('remembers a prefix with no usable key, so unknown prefixes do not each cost a lookup', () => {
    const cache = createApiKeyAuthenticator();
    const asked = cache.identify(presented('x'));
    if (asked.kind !== 'unknown') throw new Error('expected a lookup');
    cache.remember(asked, null);
    expect(cache.identify(presented('x'))).toEqual({ kind: 'invalid' });
  });

  it('asks again once an entry has expired', async () => {
    const cache = createApiKeyAuthenticator(50);
    const asked = cache.identify(presented('right'));
    if (asked.kind !== 'unknown') throw new Error('expected a lookup');
    cache.remember(asked, row('right'));
    await new Promise((r) => setTimeout(r, 200));
    expect(cache.identify(presented('right')).kind).toBe('unknown');
  });

  it('never caches a lookup asked before a forget (a revocation heard meanwhile)', () => {
    const cache = createApiKeyAuthenticator();
    const asked = cache.identify(presented('right'));
    if (asked.kind !== 'unknown') throw new Error('expected a lookup');
    cache.forget('0a1b2c3d');
    cache.remember(asked, row('right'));
    expect(cache.identify(presented('right')).kind).toBe('unknown');
  });

  it('refuses malformed keys without a lookup', () => {
    const cache = createApiKeyAuthenticator();
    for (const bad of ['svc_sk_0A1B2C3D.x', 'svc_sk_0a1b2c3.x', '0a1b2c3d.', 'nodot', `0a1b2c3d.${'a'.repeat(513)}`]) {
      expect(cache.identify(bad)).toEqual({ kind: 'invalid' });
    }
    expect(cache.identify(null)).toEqual({ kind: 'not-provided' });
  });
});

describe('key changes on another instance, through the gate', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('refuses a key revoked by another instance or the CLI, and a key whose user was disabled', async () => {
    const t = await buildTestApp(db);
    try {
      const user = await createUser(db.pool, { username: 'erin' });
      const issued = await issueApiKey(db.pool, user.id);
      const other = await issueApiKey(db.pool, user.id);
      const get = (key: string) => t.app.inject({ url: '/api/v1/', headers: { authorization: `Api-Key ${key}` } });
      expect((await get(issued.key)).statusCode).toBe(200);
      await revokeApiKey(db.pool, issued.id);
      await expect.poll(async () => (await get(issued.key)).statusCode, { timeout: 5000 }).toBe(401);
      expect((await get(other.key)).statusCode).toBe(200);
      await setUserActive(db.pool, user.id, false);
      await expect.poll(async () => (await get(other.key)).statusCode, { timeout: 5000 }).toBe(403);
    } finally {
      await t.close();
    }
  });
});

describe('API authentication while the database is down', () => {
  it('answers 503 with Retry-After instead of 500', async () => {
    const pool = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const app = await buildApp(testConfig(null), { pool, logger: false });
    const res = await app.inject({ url: '/api/v1/', headers: { authorization: 'Api-Key svc_sk_0123abcd.secret' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ detail: 'Service temporarily unavailable.' });
    expect(res.headers['retry-after']).toBe('5');
    const anonymous = await app.inject({ url: '/api/v1/' });
    expect(anonymous.statusCode).toBe(401);
    await app.close();
    await pool.end();
  });
});
