import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createUser } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { WebClient } from '../auth/web-client.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type DbProxy, startDbProxy } from '../helpers/db-proxy.js';
import { listen } from '../helpers/server.js';

let db: TestDatabase;
let proxy: DbProxy;
beforeAll(async () => {
  db = await createTestDatabase();
  proxy = await startDbProxy(db.url);
});
afterAll(async () => {
  await proxy.close();
  await db.drop();
});

it('answers a signed-in page with an HTML 503 and Retry-After while the database is out of reach', async () => {
  await createUser(db.pool, { username: 'paula', password: 'correct horse battery' });
  const pool = createPool(proxy.url, { max: 4, connectionTimeoutMillis: 5_000 });
  const app = await buildApp(testConfig({ url: proxy.url }), { pool, logger: false });
  try {
    const client = new WebClient(await listen(app));
    expect((await client.signIn('paula', 'correct horse battery')).status).toBe(302);
    expect((await client.get('/status')).status).toBe(200);
    await proxy.setMode('refuse');
    const res = await client.get('/status');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.text).toContain('Sift cannot reach its database right now.');
    await proxy.setMode('pass');
    await expect.poll(async () => (await client.get('/status')).status, { timeout: 10_000 }).toBe(200);
  } finally {
    await app.close();
    await pool.end();
  }
});
