import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_TTL_MS } from '../../src/auth/api-key-auth.js';
import { issueApiKey, revokeApiKey } from '../../src/auth/api-keys.js';
import { listenForKeyChanges } from '../../src/auth/key-changes.js';
import { createUser, setUserActive } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * Cached API keys follow the database at once: a key revoked or a user
 * disabled by another instance, the CLI or plain SQL stops working on a
 * running instance within moments, not at the end of the cache life.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds or `withinMs` passes; returns how long it took (ms), or null. */
async function settles(check: () => Promise<boolean> | boolean, withinMs: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if (await check()) return Date.now() - started;
    await sleep(20);
  }
  return null;
}

describe('a running instance follows key changes made elsewhere', () => {
  let db: TestDatabase;
  let t: TestApp;
  /** Another instance's (or the CLI's) connection to the same database. */
  let elsewhere: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db);
    elsewhere = createPool(db.url, { max: 2 });
  });
  afterAll(async () => {
    await elsewhere.end();
    await t.close();
    await db.drop();
  });

  const status = async (key: string) =>
    (await t.app.inject({ method: 'GET', url: '/api/v1/', headers: { authorization: `Api-Key ${key}` } })).statusCode;

  it('caches a key for longer than a revocation takes to arrive', () => {
    // Otherwise the tests below would pass by expiry, not by notification.
    expect(CACHE_TTL_MS).toBeGreaterThanOrEqual(10_000);
  });

  it('refuses a key revoked from another connection within a second, while its cache entry is fresh', async () => {
    const user = await createUser(elsewhere, { username: 'ivy' });
    const issued = await issueApiKey(elsewhere, user.id);
    expect(await settles(async () => (await status(issued.key)) === 200, 3000)).not.toBeNull();
    await revokeApiKey(elsewhere, issued.id);
    expect(await settles(async () => (await status(issued.key)) === 401, 1000)).not.toBeNull();
  });

  it('refuses the keys of a user disabled from another connection, and accepts them again once re-enabled', async () => {
    const user = await createUser(elsewhere, { username: 'jack' });
    const first = await issueApiKey(elsewhere, user.id);
    const second = await issueApiKey(elsewhere, user.id);
    expect(await status(first.key)).toBe(200);
    expect(await status(second.key)).toBe(200);
    await setUserActive(elsewhere, user.id, false);
    expect(
      await settles(async () => (await status(first.key)) === 403 && (await status(second.key)) === 403, 1000),
    ).not.toBeNull();
    await setUserActive(elsewhere, user.id, true);
    expect(await settles(async () => (await status(first.key)) === 200, 1000)).not.toBeNull();
  });

  it('refuses a key deleted by plain SQL', async () => {
    const user = await createUser(elsewhere, { username: 'kim' });
    const issued = await issueApiKey(elsewhere, user.id);
    expect(await status(issued.key)).toBe(200);
    await elsewhere.query('DELETE FROM api_keys WHERE id = $1', [issued.id]);
    expect(await settles(async () => (await status(issued.key)) === 401, 1000)).not.toBeNull();
  });
});

describe('the key-change listener', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  function recorder() {
    const calls: string[] = [];
    return { calls, forget: (prefix: string) => calls.push(prefix), forgetAll: () => calls.push('*') };
  }

  it('hears revocations and user changes, and nothing for a last-used write', async () => {
    const cache = recorder();
    const listener = listenForKeyChanges(db.pool, cache);
    try {
      expect(await settles(() => listener.listening, 3000)).not.toBeNull();
      cache.calls.length = 0;
      const user = await createUser(db.pool, { username: 'lee' });
      const issued = await issueApiKey(db.pool, user.id);
      await db.pool.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [issued.id]);
      await db.pool.query('UPDATE users SET last_login_at = now() WHERE id = $1', [user.id]);
      await sleep(300);
      expect(cache.calls).toEqual([]);
      await revokeApiKey(db.pool, issued.id);
      expect(await settles(() => cache.calls.includes(issued.prefix), 1000)).not.toBeNull();
      await setUserActive(db.pool, user.id, false);
      expect(await settles(() => cache.calls.includes('*'), 1000)).not.toBeNull();
    } finally {
      await listener.close();
    }
  });

  it('listens again after its connection is cut, drops everything cached meanwhile, and hears changes after', async () => {
    const cache = recorder();
    const listener = listenForKeyChanges(db.pool, cache, { retryMs: 50 });
    try {
      expect(await settles(() => listener.listening, 3000)).not.toBeNull();
      cache.calls.length = 0;
      const { rowCount } = await db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name LIKE '%auth-listener'`,
      );
      expect(rowCount).toBe(1);
      expect(await settles(() => !listener.listening, 2000)).not.toBeNull();
      expect(await settles(() => listener.listening, 3000)).not.toBeNull();
      expect(cache.calls).toEqual(['*']);
      const user = await createUser(db.pool, { username: 'max' });
      const issued = await issueApiKey(db.pool, user.id);
      await revokeApiKey(db.pool, issued.id);
      expect(await settles(() => cache.calls.includes(issued.prefix), 1000)).not.toBeNull();
    } finally {
      await listener.close();
    }
  });

  it('closes its connection when asked, even while the database cannot be reached', async () => {
    const unreachable = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const listener = listenForKeyChanges(unreachable, recorder(), { retryMs: 20 });
    await sleep(150);
    expect(listener.listening).toBe(false);
    await listener.close();
    await unreachable.end();
  });
});
