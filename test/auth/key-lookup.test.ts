import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { parseKey } from '../../src/auth/key-format.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * The admission statement looks up a key no process has cached by its prefix, passed as text
 * (migrations/0016, 0019): the lookup must be served by the prefix's unique index, not by reading
 * every key, whatever the number of keys.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

describe("an uncached key's lookup", () => {
  it('is served by the prefix index when the prefix is given as text', async () => {
    const user = await createUser(db.pool, { username: 'lookup' });
    const { key } = await issueApiKey(db.pool, user.id);
    const client = await db.pool.connect();
    try {
      // Whatever the table's size, the planner then takes the index whenever it can be used at all.
      await client.query('SET enable_seqscan = off');
      const prefix = parseKey(key)?.prefix ?? '';
      expect(prefix).toMatch(/^[0-9a-f]{8}$/);
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        'EXPLAIN SELECT k.id FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = $1::text',
        [prefix],
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index (Only )?Scan using api_keys_prefix_key/);
      const found = await client.query('SELECT 1 FROM api_keys WHERE prefix = $1::text', [prefix]);
      expect(found.rowCount).toBe(1);
    } finally {
      client.release();
    }
  });
});
