import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import {
  createApiKeyAuthenticator,
  createLastUsedRecorder,
  keyStartIn,
  sameTextAt,
} from '../../src/auth/api-key-auth.js';
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
    expect(body.web_search).toBe('http://search.example:8443/api/v1/web/');
    expect(body.translate_languages).toBe('http://search.example:8443/api/v1/translate/languages/');
    expect(body.status).toBe('http://search.example:8443/api/v1/status/');
    expect(body.key).toBe('http://search.example:8443/api/v1/key/');
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
    const recorder = createLastUsedRecorder(counting, (err) => {
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

describe('key lookups cached for a bounded time', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('stops accepting a key revoked on another instance once the cache entry expires', async () => {
    const user = await createUser(db.pool, { username: 'dave' });
    const issued = await issueApiKey(db.pool, user.id);
    const authenticator = createApiKeyAuthenticator(db.pool, 300);
    expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    await revokeApiKey(db.pool, issued.id); // as the CLI or another instance would
    await new Promise((r) => setTimeout(r, 400));
    expect((await authenticator.authenticate(issued.key)).kind).toBe('invalid');
  });

  it('stops accepting the key of a user disabled elsewhere once the cache entry expires', async () => {
    const user = await createUser(db.pool, { username: 'erin' });
    const issued = await issueApiKey(db.pool, user.id);
    const authenticator = createApiKeyAuthenticator(db.pool, 300);
    expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    await setUserActive(db.pool, user.id, false);
    await new Promise((r) => setTimeout(r, 400));
    expect((await authenticator.authenticate(issued.key)).kind).toBe('disabled');
  });

  it('answers a cached key without a database round trip', async () => {
    const user = await createUser(db.pool, { username: 'frank' });
    const issued = await issueApiKey(db.pool, user.id);
    const { pool: counting, queries } = countingQueries(db.pool);
    const authenticator = createApiKeyAuthenticator(counting, 10_000);
    await Promise.all([authenticator.authenticate(issued.key), authenticator.authenticate(issued.key)]);
    expect(queries()).toBe(1);
    for (let i = 0; i < 5; i++) expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    expect(queries()).toBe(1);
  });
});

describe('a cached key checked against the secret it last matched', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('refuses a wrong secret for a key whose right secret was just accepted, and still accepts the right one', async () => {
    const user = await createUser(db.pool, { username: 'hank' });
    const issued = await issueApiKey(db.pool, user.id);
    const authenticator = createApiKeyAuthenticator(db.pool, 10_000);
    const first = await authenticator.authenticate(issued.key);
    expect(first.kind).toBe('ok');
    const secret = issued.key.slice(issued.key.indexOf('.') + 1);
    // Same length, one character changed at each end and in the middle; shorter; longer.
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
    const base = issued.key.slice(0, issued.key.indexOf('.') + 1);
    for (const wrong of [
      flip(secret, 0),
      flip(secret, secret.length >> 1),
      flip(secret, secret.length - 1),
      secret.slice(0, -1),
      `${secret}A`,
    ]) {
      expect(authenticator.authenticateCached(`${base}${wrong}`)).toEqual({ kind: 'invalid' });
    }
    // The right secret again: the same principal (the outcome kept with the row), not a new lookup.
    const again = authenticator.authenticateCached(issued.key);
    expect(again).toEqual(first);
    expect(again).toBe(authenticator.authenticateCached(issued.key));
  });

  it('reads a key in place in its header: the same outcomes as the key cut out, right and wrong secrets alike', async () => {
    const user = await createUser(db.pool, { username: 'hedy' });
    const issued = await issueApiKey(db.pool, user.id);
    const authenticator = createApiKeyAuthenticator(db.pool, 10_000);
    const header = `Bearer ${issued.key}`;
    const start = keyStartIn(header);
    expect(start).toBe('Bearer '.length);
    const first = await authenticator.authenticate(header, start);
    expect(first.kind).toBe('ok');
    // The remembered secret, compared in place, and the key cut out: one outcome.
    expect(authenticator.authenticateCached(header, start)).toBe(authenticator.authenticateCached(issued.key));
    const secret = issued.key.slice(issued.key.indexOf('.') + 1);
    const base = `Api-Key ${issued.key.slice(0, issued.key.indexOf('.') + 1)}`;
    for (const wrong of [`${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`, secret.slice(1), `${secret}A`]) {
      const wrongHeader = `${base}${wrong}`;
      expect(authenticator.authenticateCached(wrongHeader, keyStartIn(wrongHeader))).toEqual({ kind: 'invalid' });
    }
    for (const other of ['Basic abc', `Bearer  ${issued.key}`, issued.key, 'Bearer', ` Bearer ${issued.key}`]) {
      expect(keyStartIn(other)).toBe(-1);
    }
  });

  it('refuses the remembered secret once its key is revoked on this instance', async () => {
    const user = await createUser(db.pool, { username: 'iris' });
    const issued = await issueApiKey(db.pool, user.id);
    const authenticator = createApiKeyAuthenticator(db.pool, 10_000);
    expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    expect(authenticator.authenticateCached(issued.key)?.kind).toBe('ok');
    await revokeApiKey(db.pool, issued.id);
    authenticator.forget(issued.prefix);
    expect(authenticator.authenticateCached(issued.key)).toBeUndefined();
    expect((await authenticator.authenticate(issued.key)).kind).toBe('invalid');
  });
});

describe('sameTextAt', () => {
  it('is string equality of the text from an index on', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (before, a, b) => {
        expect(sameTextAt(before + a, before.length, b)).toBe(a === b);
        expect(sameTextAt(before + a, before.length, a)).toBe(true);
        expect(sameTextAt(a, 0, b)).toBe(a === b);
      }),
    );
    // Equal lengths that differ in one place only.
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ minLength: 1 }),
        fc.nat(),
        fc.integer({ min: 1, max: 0xffff }),
        (before, a, at, delta) => {
          const i = at % a.length;
          const b = `${a.slice(0, i)}${String.fromCharCode((a.charCodeAt(i) + delta) % 0x10000)}${a.slice(i + 1)}`;
          expect(sameTextAt(before + a, before.length, b)).toBe(a === b);
        },
      ),
    );
  });
});

describe('key lookups refreshed ahead of expiry', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('reads a key used past half its entry life afresh in the background, so steady use never waits for a lookup', async () => {
    const user = await createUser(db.pool, { username: 'gina' });
    const issued = await issueApiKey(db.pool, user.id);
    const { pool: counting, queries } = countingQueries(db.pool);
    const authenticator = createApiKeyAuthenticator(counting, 400);
    expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    expect(queries()).toBe(1);
    // Used every 250 ms for 1.5 s (almost four entry lives): each use past 200 ms starts one background read.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 250));
      expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    }
    // The last use's read waits a twentieth of the entry life for other keys to share its statement.
    await new Promise((r) => setTimeout(r, 50));
    expect(queries()).toBe(7);
    // The background reads kept the entry alive: revoked now, the key stops within one entry life.
    await revokeApiKey(db.pool, issued.id);
    await new Promise((r) => setTimeout(r, 450));
    expect((await authenticator.authenticate(issued.key)).kind).toBe('invalid');
  });

  it('reads the keys due for a background read together, in one statement, each row to its own key', async () => {
    const user = await createUser(db.pool, { username: 'ivy' });
    const other = await createUser(db.pool, { username: 'jake' });
    const issued = [
      ...(await Promise.all([1, 2, 3].map(() => issueApiKey(db.pool, user.id)))),
      await issueApiKey(db.pool, other.id),
    ];
    const { pool: counting, queries } = countingQueries(db.pool);
    const authenticator = createApiKeyAuthenticator(counting, 400);
    for (const k of issued) expect((await authenticator.authenticate(k.key)).kind).toBe('ok');
    expect(queries()).toBe(4);
    await new Promise((r) => setTimeout(r, 250));
    // Changed since they were cached: one revoked, the other's owner disabled.
    await revokeApiKey(db.pool, issued[1]!.id);
    await setUserActive(db.pool, other.id, false);
    // Past half their life: every use answers from the cache and queues its key for the one read.
    for (const k of issued) expect((await authenticator.authenticate(k.key)).kind).toBe('ok');
    await new Promise((r) => setTimeout(r, 60));
    expect(queries()).toBe(5);
    expect(await Promise.all(issued.map(async (k) => (await authenticator.authenticate(k.key)).kind))).toEqual([
      'ok',
      'invalid',
      'ok',
      'disabled',
    ]);
    expect(queries()).toBe(5);
  });

  it('never brings back a row forgotten while its background read was in flight', async () => {
    const user = await createUser(db.pool, { username: 'hank' });
    const issued = await issueApiKey(db.pool, user.id);
    // Results of the pool are held back while `gate` is set: a read is done, its answer arrives later.
    let gate: Promise<void> | null = null;
    let open = () => {};
    const holding = new Proxy(db.pool, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return async (...args: unknown[]) => {
            const result = await (target.query as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            if (gate) await gate;
            return result;
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const authenticator = createApiKeyAuthenticator(holding, 400);
    expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    await new Promise((r) => setTimeout(r, 250));
    gate = new Promise<void>((r) => {
      open = r;
    });
    // This use starts a background read, which finds the key active; its answer is held back.
    expect((await authenticator.authenticate(issued.key)).kind).toBe('ok');
    await new Promise((r) => setTimeout(r, 50));
    // The revocation on this instance lands meanwhile, then the old answer arrives.
    await revokeApiKey(db.pool, issued.id);
    authenticator.forget(issued.prefix);
    gate = null;
    open();
    await new Promise((r) => setTimeout(r, 20));
    expect((await authenticator.authenticate(issued.key)).kind).toBe('invalid');
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
