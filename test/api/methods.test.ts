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
});
