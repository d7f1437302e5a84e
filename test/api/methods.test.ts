import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let t: TestApp;
let key: string;

beforeAll(async () => {
  db = await createTestDatabase();
  t = await buildTestApp(db);
  const user = await createUser(db.pool, { username: 'methods' });
  key = (await issueApiKey(db.pool, user.id)).key;
});
afterAll(async () => {
  await t.close();
  await db.drop();
});

describe('API methods and unknown paths', () => {
  it('answers a known path with a wrong method 405 with Allow, after authentication', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/web/?q=x',
      headers: { authorization: `Api-Key ${key}` },
    });
    expect(res.statusCode).toBe(405);
    expect(res.json()).toEqual({ detail: 'Method "POST" not allowed.' });
    expect(res.headers.allow).toBe('GET, HEAD');
    const anonymous = await t.app.inject({ method: 'DELETE', url: '/api/v1/web/' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('answers an unknown API path 404 JSON for an authenticated key, 401 without one', async () => {
    const known = await t.app.inject({ url: '/api/v1/nothing-here/', headers: { authorization: `Api-Key ${key}` } });
    expect(known.statusCode).toBe(404);
    expect(known.json()).toEqual({ detail: 'Not found.' });
    expect((await t.app.inject({ url: '/api/v1/nothing-here/' })).statusCode).toBe(401);
  });

  it('refuses a text/plain body with 415, as for any type that is neither a form nor JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/translate/',
      headers: { authorization: `Api-Key ${key}`, 'content-type': 'text/plain' },
      payload: 'q=hello&target=de',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ detail: 'Unsupported media type.' });
  });
  it('answers a JSON POST with an empty body by its path: 404 unknown, 405 wrong method, 400 naming fields', async () => {
    const post = (url: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: '' });
    const auth = { authorization: `Api-Key ${key}` };
    for (const url of ['/nothing-here', '/api/v1/nothing-here/']) {
      const res = await post(url, auth);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^application\/json/);
      expect(res.json(), url).toEqual({ detail: 'Not found.' });
    }
    const wrongMethod = await post('/api/v1/web/', auth);
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.json()).toEqual({ detail: 'Method "POST" not allowed.' });
    // A known path that takes a body: the fields it needs are missing.
    const translate = await post('/api/v1/translate/', auth);
    expect(translate.statusCode).toBe(400);
    expect(translate.json()).toHaveProperty('target');
    // Malformed JSON is still refused as such.
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/translate/',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"q":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual({ detail: 'Request body is not valid JSON.' });
    const poisoned = await t.app.inject({
      method: 'POST',
      url: '/api/v1/translate/',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"q":"x","target":"de","__proto__":{"admin":true}}',
    });
    expect(poisoned.statusCode).toBe(400);
  });
});
