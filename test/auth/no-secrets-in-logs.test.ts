import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createUser } from '../../src/auth/users.js';
import { createPool } from '../../src/db/pool.js';
import { loggerOptions } from '../../src/runtime/logging.js';
import { testConfig } from '../helpers/app.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { listen } from '../helpers/server.js';
import { WebClient } from './web-client.js';

describe('secrets stay out of the logs', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('logs neither passwords, session ids, nor API keys while signing in, creating and using keys at trace level', async () => {
    let logText = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logText += chunk.toString();
        done();
      },
    });
    const options = loggerOptions({ LOG_LEVEL: 'trace' }) as pino.LoggerOptions;
    const logger = pino({ ...options, transport: undefined }, sink) as unknown as FastifyBaseLogger;
    const pool = createPool(db.url);
    const app = await buildApp(testConfig(db, { LOG_LEVEL: 'trace' }), { pool, logger });
    const base = await listen(app);
    try {
      await createUser(db.pool, { username: 'alice', password: 'very secret password' });
      const client = new WebClient(base);
      await client.signIn('alice', 'wrong secret password');
      await client.signIn('alice', 'very secret password');
      const page = await client.get('/settings/keys');
      const created = await client.post('/settings/keys', { _csrf: WebClient.csrfToken(page.text), name: 'k' });
      const key = /svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}/.exec(created.text)![0];
      await fetch(`${base}/api/v1/`, { headers: { authorization: `Api-Key ${key}` } });
      await fetch(`${base}/api/v1/`, { headers: { 'x-api-key': key } });
      await fetch(`${base}/api/v1/`, { headers: { 'x-api-key': `${key.slice(0, 20)}tampered` } });

      expect(logText.length).toBeGreaterThan(0);
      expect(logText).not.toContain('very secret password');
      expect(logText).not.toContain('wrong secret password');
      expect(logText).not.toContain(key.split('.')[1]!);
      expect(logText).not.toContain(client.cookies.get('sift_session')!.split('.')[0]!);
    } finally {
      await app.close();
      await pool.end();
    }
  });
});
