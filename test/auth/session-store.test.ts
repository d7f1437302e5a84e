import type { Session } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgSessionStore } from '../../src/routes/web/session-store.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

const call = <T>(fn: (cb: (err?: unknown, value?: T) => void) => void) =>
  new Promise<T | undefined>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));

function session(expires: Date, userId: number): Session {
  return { cookie: { originalMaxAge: null, expires }, userId } as Session;
}

describe('Postgres session store', () => {
  let db: TestDatabase;
  let store: PgSessionStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PgSessionStore(db.pool);
  });
  afterAll(async () => db.drop());

  it('stores, reads back and destroys a session, keyed by a hash of its id', async () => {
    await call((cb) => store.set('session-id-1', session(new Date(Date.now() + 60_000), 7), cb));
    const loaded = await call<Session | null>((cb) => store.get('session-id-1', cb));
    expect(loaded?.userId).toBe(7);
    const { rows } = await db.pool.query('SELECT sid FROM sessions');
    expect(rows.map((r) => r.sid)).not.toContain('session-id-1');
    await call((cb) => store.destroy('session-id-1', cb));
    expect(await call((cb) => store.get('session-id-1', cb))).toBeNull();
  });

  it('never returns an expired session, and prunes expired rows', async () => {
    await call((cb) => store.set('old', session(new Date(Date.now() - 1000), 1), cb));
    await call((cb) => store.set('current', session(new Date(Date.now() + 60_000), 2), cb));
    expect(await call((cb) => store.get('old', cb))).toBeNull();
    expect(await store.prune()).toBe(1);
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM sessions');
    expect(rows[0].n).toBe(1);
  });
});
