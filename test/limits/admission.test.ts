import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { hashSecret, parseKey } from '../../src/auth/key-format.js';
import { createUser } from '../../src/auth/users.js';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import {
  type AdmissionAsk,
  type AdmissionSettings,
  createAdmissions,
  type Decided,
  decideAdmissions,
  pruneIdleRateLimits,
} from '../../src/limits/admission.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * The admission statement (migrations/0010_api_admission.sql) against a real database, at times
 * the tests choose (the clock is injected, so no test waits for a window to pass).
 */

function rate(text: string): Rate {
  const r = parseRate(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

let db: TestDatabase;
let users = 0;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

/** A fresh user with one key: its ids and the key. */
async function newKey() {
  const user = await createUser(db.pool, { username: `admission${++users}` });
  const issued = await issueApiKey(db.pool, user.id);
  return { keyId: issued.id, userId: user.id, key: issued.key };
}

/** A clock the test moves (ms since the epoch), starting at a fixed instant. */
function testClock(start = Date.UTC(2026, 11, 3, 12, 0, 0)) {
  let now = start;
  return {
    now: () => now,
    advance(seconds: number) {
      now += seconds * 1000;
    },
  };
}

function settings(burst: string, sustained: string, monthlyQuota: number, clock: () => number): AdmissionSettings {
  return { limits: { burst: rate(burst), sustained: rate(sustained) }, monthlyQuota, clock };
}

const request = (keyId: number, userId: number, units = 1, metered = true): AdmissionAsk => ({
  key: { keyId, userId },
  limited: true,
  metered,
  units,
});

async function admitOne(s: AdmissionSettings, ask: AdmissionAsk): Promise<Decided> {
  return (await decideAdmissions(db.pool, s, [ask]))[0]!;
}

const verdicts = (decided: Decided[]) => decided.map((d) => d.admission.verdict);

describe('rate windows', () => {
  it('admits exactly the burst limit, then refuses with the wait until the oldest admission leaves', async () => {
    const clock = testClock();
    const s = settings('3/min', '100/day', 0, clock.now);
    const { keyId, userId } = await newKey();
    const first = await admitOne(s, request(keyId, userId));
    clock.advance(10);
    await admitOne(s, request(keyId, userId));
    await admitOne(s, request(keyId, userId));
    const refused = await admitOne(s, request(keyId, userId));
    expect(first.admission.verdict).toBe('admitted');
    expect(refused.admission).toMatchObject({
      verdict: 'throttled',
      rate: { admitted: false, burst: { remaining: 0, exceeded: true, resetSeconds: 50 } },
    });
  });

  it('slides: the slot of the oldest admission comes back when it leaves, not at a fixed boundary', async () => {
    const clock = testClock();
    const s = settings('2/min', '100/day', 0, clock.now);
    const { keyId, userId } = await newKey();
    await admitOne(s, request(keyId, userId));
    clock.advance(30);
    await admitOne(s, request(keyId, userId));
    clock.advance(29);
    expect((await admitOne(s, request(keyId, userId))).admission.verdict).toBe('throttled');
    clock.advance(1);
    expect((await admitOne(s, request(keyId, userId))).admission.verdict).toBe('admitted');
    expect((await admitOne(s, request(keyId, userId))).admission.verdict).toBe('throttled');
  });

  it('applies the sustained limit on its own window, and records a refused request in neither', async () => {
    const clock = testClock();
    const s = settings('100/min', '3/day', 0, clock.now);
    const { keyId, userId } = await newKey();
    for (let i = 0; i < 3; i++) await admitOne(s, request(keyId, userId));
    const refused = await admitOne(s, request(keyId, userId));
    expect(refused.admission).toMatchObject({
      verdict: 'throttled',
      rate: { burst: { remaining: 97, exceeded: false }, sustained: { remaining: 0, exceeded: true } },
    });
    clock.advance(86_400);
    const next = await admitOne(s, request(keyId, userId));
    expect(next.admission).toMatchObject({ verdict: 'admitted', rate: { burst: { remaining: 99 } } });
  });

  it('never admits more than the limit in any interval of the window, across bucket steps', async () => {
    const clock = testClock();
    const s = settings('10/min', '1000/day', 0, clock.now);
    const { keyId, userId } = await newKey();
    const admittedAt: number[] = [];
    for (let t = 0; t < 300; t++) {
      // Two requests every 0.7 s for 210 s.
      for (let i = 0; i < 2; i++) {
        const d = await admitOne(s, request(keyId, userId, 1, false));
        if (d.admission.verdict === 'admitted') admittedAt.push(clock.now());
      }
      clock.advance(0.7);
    }
    for (const start of admittedAt) {
      const inWindow = admittedAt.filter((t) => t >= start && t < start + 60_000).length;
      expect(inWindow).toBeLessThanOrEqual(10);
    }
    // And the limit is used: at least 10 a minute after the first.
    expect(admittedAt.length).toBeGreaterThanOrEqual(30);
  });

  it('keeps its stored windows small whatever the limit: one bucket per step', async () => {
    const clock = testClock();
    const s = settings('100000/min', '100000/day', 0, clock.now);
    const { keyId, userId } = await newKey();
    for (let i = 0; i < 300; i++) {
      await admitOne(s, request(keyId, userId, 1, false));
      clock.advance(2);
    }
    const { rows } = await db.pool.query(
      'SELECT cardinality(sustained_closed_at) AS buckets, sustained_admitted FROM rate_limits WHERE key_id = $1',
      [keyId],
    );
    // 600 s at a 60 s step: 10 buckets (the newest open), 300 admissions.
    expect(rows[0]).toEqual({ buckets: 9, sustained_admitted: 300 });
  });

  it('decides a batch in order and keeps keys apart', async () => {
    const clock = testClock();
    const s = settings('2/min', '100/day', 0, clock.now);
    const a = await newKey();
    const b = await newKey();
    const decided = await decideAdmissions(db.pool, s, [
      request(a.keyId, a.userId),
      request(b.keyId, b.userId),
      request(a.keyId, a.userId),
      request(a.keyId, a.userId),
      request(b.keyId, b.userId),
    ]);
    expect(verdicts(decided)).toEqual(['admitted', 'admitted', 'admitted', 'throttled', 'admitted']);
  });

  it('prunes only rows idle for longer than both windows', async () => {
    const s = settings('5/min', '10/hour', 0, () => Date.now());
    const { keyId, userId } = await newKey();
    await admitOne(s, request(keyId, userId));
    expect(await pruneIdleRateLimits(db.pool, s.limits)).toBe(0);
    await db.pool.query(`UPDATE rate_limits SET touched_at = now() - interval '2 hours' WHERE key_id = $1`, [keyId]);
    expect(await pruneIdleRateLimits(db.pool, s.limits)).toBe(1);
  });
});

describe('monthly quota, reserved at admission', () => {
  it('reserves each admitted request’s searches and refuses the one that would pass the quota', async () => {
    const clock = testClock();
    const s = settings('100/min', '1000/day', 10, clock.now);
    const { keyId, userId } = await newKey();
    const decided = [];
    for (const units of [4, 4, 4, 2, 1]) decided.push(await admitOne(s, request(keyId, userId, units)));
    expect(verdicts(decided)).toEqual(['admitted', 'admitted', 'quota-exhausted', 'admitted', 'quota-exhausted']);
    expect(decided[2]!.admission).toMatchObject({ searchesThisMonth: 8 });
    expect(await monthlySearches(db.pool, userId, new Date(clock.now()))).toBe(10);
  });

  it('refuses even a request that reserves nothing once the quota is used, but not unmetered ones', async () => {
    const clock = testClock();
    const s = settings('100/min', '1000/day', 1, clock.now);
    const { keyId, userId } = await newKey();
    await admitOne(s, request(keyId, userId, 1));
    expect((await admitOne(s, request(keyId, userId, 0))).admission.verdict).toBe('quota-exhausted');
    expect((await admitOne(s, request(keyId, userId, 0, false))).admission.verdict).toBe('admitted');
  });

  it('does not spend a rate slot on a request the quota refuses', async () => {
    const clock = testClock();
    const s = settings('2/min', '1000/day', 1, clock.now);
    const { keyId, userId } = await newKey();
    await admitOne(s, request(keyId, userId, 1));
    await admitOne(s, request(keyId, userId, 1));
    const unmetered = await admitOne(s, request(keyId, userId, 0, false));
    expect(unmetered.admission).toMatchObject({ verdict: 'admitted', rate: { burst: { remaining: 0 } } });
  });

  it('counts in the month of the decision: a new month starts from zero', async () => {
    const clock = testClock(Date.UTC(2026, 10, 30, 23, 59, 0));
    const s = settings('100/min', '1000/day', 2, clock.now);
    const { keyId, userId } = await newKey();
    await admitOne(s, request(keyId, userId, 2));
    expect((await admitOne(s, request(keyId, userId, 1))).admission.verdict).toBe('quota-exhausted');
    clock.advance(60);
    expect((await admitOne(s, request(keyId, userId, 1))).admission.verdict).toBe('admitted');
  });

  it('admits exactly the quota among concurrent requests from two pools (instances)', async () => {
    const s: AdmissionSettings = settings('1000/min', '10000/day', 25, () => Date.now());
    const { keyId, userId } = await newKey();
    const other = createPool(db.url, { max: 5 });
    try {
      const first = createAdmissions(db.pool, s);
      const second = createAdmissions(other, s);
      const all = await Promise.all(
        Array.from({ length: 80 }, (_, i) => (i % 2 ? first : second).admit(request(keyId, userId))),
      );
      expect(all.filter((d) => d.admission.verdict === 'admitted')).toHaveLength(25);
      expect(await monthlySearches(db.pool, userId)).toBe(25);
    } finally {
      await other.end();
    }
  });
});

describe('keys not cached, looked up by the same statement', () => {
  it('admits a key by its prefix and secret hash, returning its row; refuses a wrong secret and a revoked key', async () => {
    const s = settings('10/min', '100/day', 0, () => Date.now());
    const { keyId, userId, key } = await newKey();
    const parsed = parseKey(key)!;
    const byPrefix = (secret: string): AdmissionAsk => ({
      key: { prefix: parsed.prefix, secretHash: hashSecret(secret) },
      limited: true,
      metered: false,
      units: 0,
    });
    const [right, wrong] = await decideAdmissions(db.pool, s, [byPrefix(parsed.secret), byPrefix('not-it')]);
    expect(right!.admission.verdict).toBe('admitted');
    expect(right!.row).toMatchObject({ keyId, userId, prefix: parsed.prefix, userActive: true });
    expect(wrong!.admission.verdict).toBe('invalid-key');
    // The row comes back for a wrong secret too (the caller caches it), and the refusal spent no slot.
    expect(wrong!.row).toMatchObject({ keyId });
    await db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
    const [revoked] = await decideAdmissions(db.pool, s, [byPrefix(parsed.secret)]);
    expect(revoked!.admission.verdict).toBe('invalid-key');
    expect(revoked!.row).toBeNull();
  });

  it('says a disabled user’s key is disabled only to its right secret', async () => {
    const s = settings('10/min', '100/day', 0, () => Date.now());
    const { userId, key } = await newKey();
    await db.pool.query('UPDATE users SET is_active = false WHERE id = $1', [userId]);
    const parsed = parseKey(key)!;
    const ask = (secret: string): AdmissionAsk => ({
      key: { prefix: parsed.prefix, secretHash: hashSecret(secret) },
      limited: true,
      metered: true,
      units: 1,
    });
    const [right, wrong] = await decideAdmissions(db.pool, s, [ask(parsed.secret), ask('nope')]);
    expect(right!.admission.verdict).toBe('disabled-user');
    expect(wrong!.admission.verdict).toBe('invalid-key');
    expect(await monthlySearches(db.pool, userId)).toBe(0);
  });
});
