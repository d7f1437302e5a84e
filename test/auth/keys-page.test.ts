import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { type TestApp, buildTestApp } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';
import { WebClient } from './web-client.js';

const KEY = /svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}/;

describe('the API keys page', () => {
  let db: TestDatabase;
  let t: TestApp;
  let base: string;
  let alice: WebClient;
  let mallory: { id: number };

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await buildTestApp(db);
    base = await listen(t.app);
    await createUser(db.pool, { username: 'alice', password: 'correct horse battery' });
    mallory = await createUser(db.pool, { username: 'mallory', password: 'mallorys password' });
    alice = new WebClient(base);
    expect((await alice.signIn('alice', 'correct horse battery')).status).toBe(302);
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  const token = async () => WebClient.csrfToken((await alice.get('/settings/keys')).text);

  it('creates a named key, shows the full key once, and lists only its prefix afterwards', async () => {
    const created = await alice.post('/settings/keys', { _csrf: await token(), name: '<b>laptop</b>' });
    expect(created.status).toBe(200);
    const key = KEY.exec(created.text)![0];
    expect(created.text).toContain('shown only once');
    expect(created.text).toContain('&lt;b&gt;laptop&lt;/b&gt;');
    expect(created.text).not.toContain('<b>laptop</b>');
    expect(created.headers.get('cache-control')).toBe('no-store');

    const api = await fetch(`${base}/api/v1/key/`, { headers: { authorization: `Api-Key ${key}` } });
    expect(api.status).toBe(200);
    expect(((await api.json()) as { name: string }).name).toBe('<b>laptop</b>');

    const later = await alice.get('/settings/keys');
    expect(later.text).not.toMatch(KEY);
    expect(later.text).toContain(key.slice(0, 15));
    expect(later.text).toContain('Active');
  });

  it('names a key "API key" when the name is left blank, and rejects an over-long name', async () => {
    const created = await alice.post('/settings/keys', { _csrf: await token(), name: '   ' });
    expect(created.status).toBe(200);
    expect(created.text).toContain('Your new key “API key”');
    const long = await alice.post('/settings/keys', { _csrf: await token(), name: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.text).toContain('at most 100 characters');
    expect(long.text).not.toMatch(KEY);
  });

  it('refuses to create a key without a CSRF token', async () => {
    const before = (await db.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
    const res = await alice.post('/settings/keys', { name: 'sneaky' });
    expect(res.status).toBe(403);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n).toBe(before);
  });

  it('revokes an own key: the API refuses it at once', async () => {
    const created = await alice.post('/settings/keys', { _csrf: await token(), name: 'short-lived' });
    const key = KEY.exec(created.text)![0];
    expect((await fetch(`${base}/api/v1/`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const { rows } = await db.pool.query('SELECT id FROM api_keys WHERE prefix = $1', [key.slice(7, 15)]);
    const res = await alice.post(`/settings/keys/${rows[0].id}/revoke`, { _csrf: await token() });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings/keys');
    const page = await alice.get('/settings/keys');
    expect(page.text).toContain(`Revoked key ${key.slice(0, 15)}`);
    const after = await fetch(`${base}/api/v1/`, { headers: { 'x-api-key': key } });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ detail: 'Invalid or revoked API key.' });
  });

  it("cannot revoke another user's key", async () => {
    const theirs = await issueApiKey(db.pool, mallory.id, 'theirs');
    const res = await alice.post(`/settings/keys/${theirs.id}/revoke`, { _csrf: await token() });
    expect(res.status).toBe(303);
    const { rows } = await db.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [theirs.id]);
    expect(rows[0].revoked_at).toBeNull();
    expect((await alice.get('/settings/keys')).text).toContain('That key does not exist.');
    const junk = await alice.post('/settings/keys/not-a-number/revoke', { _csrf: await token() });
    expect(junk.status).toBe(303);
  });

  it('allows at most 20 active keys through the page', async () => {
    const active = async () =>
      (
        await db.pool.query(
          "SELECT count(*)::int AS n FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.username = 'alice' AND revoked_at IS NULL",
        )
      ).rows[0].n as number;
    while ((await active()) < 20) {
      expect((await alice.post('/settings/keys', { _csrf: await token(), name: 'filler' })).status).toBe(200);
    }
    const refused = await alice.post('/settings/keys', { _csrf: await token(), name: 'one too many' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('You already have 20 active keys');
    expect(refused.text).not.toMatch(KEY);
    expect(await active()).toBe(20);
    expect((await alice.get('/settings/keys')).text).not.toContain('action="/settings/keys" class="inline-form"');
  });
});
