import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CLIENT_THRESHOLD,
  CLIENT_USER_THRESHOLD,
  MAX_DELAY_S,
  clientKey,
  createLoginThrottle,
} from '../../src/auth/login-throttle.js';
import { createPool } from '../../src/db/pool.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * The sign-in throttle against a real database: attempts counted before the password is checked,
 * parallel attempts counted like sequential ones, per client and per client and username. The
 * clock is the test's: delays are checked by moving it, never by waiting.
 */

let db: TestDatabase;
let pool: pg.Pool;
let clock: number;
const now = () => new Date(clock);
const advance = (seconds: number) => {
  clock += seconds * 1000;
};

beforeAll(async () => {
  db = await createTestDatabase();
  // Enough connections for the parallel attempts to reach the database together.
  pool = createPool(db.url, { max: 40 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});
beforeEach(async () => {
  clock = Date.UTC(2026, 0, 1, 12);
  await pool.query('DELETE FROM sign_in_attempts');
});

describe('sign-in throttle', () => {
  it('takes a client’s attempts at a username up to the threshold, then blocks for a delay doubling from 1 s', async () => {
    const throttle = createLoginThrottle(pool, { now });
    for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) expect(await throttle.take('203.0.113.1', 'dora')).toBe(0);
    // the attempt that reached the threshold blocks the next one for 1 s, which is not counted
    expect(await throttle.take('203.0.113.1', 'dora')).toBe(1);
    expect(await throttle.take('203.0.113.1', ' DORA ')).toBe(1);
    advance(1);
    expect(await throttle.take('203.0.113.1', 'dora')).toBe(0);
    expect(await throttle.take('203.0.113.1', 'dora')).toBe(2);
    advance(2);
    expect(await throttle.take('203.0.113.1', 'dora')).toBe(0);
    expect(await throttle.take('203.0.113.1', 'dora')).toBe(4);
    // an hour after the last attempt the count starts afresh
    advance(3600);
    for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) expect(await throttle.take('203.0.113.1', 'dora')).toBe(0);
    expect(await throttle.take('203.0.113.1', 'dora')).toBe(1);
  });

  it('caps the delay at 15 minutes', async () => {
    const throttle = createLoginThrottle(pool, { now });
    let wait = 0;
    for (let i = 0; i < 40; i++) {
      expect(await throttle.take('203.0.113.2', 'erin')).toBe(0);
      wait = await throttle.take('203.0.113.2', 'erin');
      advance(wait);
    }
    expect(wait).toBe(MAX_DELAY_S);
  });

  it('counts parallel attempts of one client at one username like sequential ones', async () => {
    const throttle = createLoginThrottle(pool, { now });
    const waits = await Promise.all(Array.from({ length: 60 }, () => throttle.take('203.0.113.3', 'frank')));
    expect(waits.filter((w) => w === 0)).toHaveLength(CLIENT_USER_THRESHOLD);
    expect(waits.filter((w) => w > 0)).toHaveLength(60 - CLIENT_USER_THRESHOLD);
  });

  it('counts parallel attempts of one client across usernames like sequential ones', async () => {
    const throttle = createLoginThrottle(pool, { now });
    const waits = await Promise.all(Array.from({ length: 60 }, (_, i) => throttle.take('203.0.113.4', `spray-${i}`)));
    expect(waits.filter((w) => w === 0)).toHaveLength(CLIENT_THRESHOLD);
    // another client is not held up by it, at any username
    expect(await throttle.take('203.0.113.5', 'spray-1')).toBe(0);
  });

  it('never lets one client’s attempts at a username lock another client out of it', async () => {
    const throttle = createLoginThrottle(pool, { now });
    for (let i = 0; i < 30; i++) await throttle.take('203.0.113.6', 'grace');
    expect(await throttle.take('203.0.113.6', 'grace')).toBeGreaterThan(0);
    // every other client, one after another, may still try (and fail) without locking the others
    for (let c = 10; c < 20; c++) expect(await throttle.take(`198.51.100.${c}`, 'grace'), `client ${c}`).toBe(0);
  });

  it('clears the username’s count on success and gives the attempt back to the client', async () => {
    const throttle = createLoginThrottle(pool, { now });
    for (let i = 0; i < CLIENT_USER_THRESHOLD - 1; i++) await throttle.take('203.0.113.7', 'heidi');
    expect(await throttle.take('203.0.113.7', 'heidi')).toBe(0);
    await throttle.succeeded('203.0.113.7', 'heidi');
    // the block the last attempt set went with its count
    for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) expect(await throttle.take('203.0.113.7', 'heidi')).toBe(0);
    // many users signing in behind one address never block it: only failures add up there
    for (let i = 0; i < 3 * CLIENT_THRESHOLD; i++) {
      expect(await throttle.take('203.0.113.8', `user-${i}`), `user ${i}`).toBe(0);
      await throttle.succeeded('203.0.113.8', `user-${i}`);
    }
  });

  it('keys a client by its IPv4 address, also IPv4-mapped, and an IPv6 client by its /64', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::99')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:DB8:0001::')).toBe('2001:db8:1:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });

  it('holds an IPv6 client to one count across the addresses of its /64', async () => {
    const throttle = createLoginThrottle(pool, { now });
    for (let i = 0; i < CLIENT_USER_THRESHOLD; i++) {
      expect(await throttle.take(`2001:db8:5:6::${i + 1}`, 'ivan')).toBe(0);
    }
    expect(await throttle.take('2001:db8:5:6:ffff::1', 'ivan')).toBeGreaterThan(0);
    expect(await throttle.take('2001:db8:5:7::1', 'ivan')).toBe(0);
  });
});
