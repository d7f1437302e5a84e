import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { hashSecret, parseKey } from '../../src/auth/key-format.js';
import { createUser } from '../../src/auth/users.js';
import { parseRate, type Rate } from '../../src/config/rate.js';
import { createPool } from '../../src/db/pool.js';
import {
  type AdmissionAsk,
  type AdmissionSettings,
  type Decided,
  decideAdmissions,
} from '../../src/limits/admission.js';
import { createUsageLedger } from '../../src/limits/ledger.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * The admission statement (admit_api_requests, migrations/0016_usage_ledger.sql) against a real database, at times
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
    const ledger = createUsageLedger(db.pool, s);
    expect((await ledger.prune()).rateRows).toBe(0);
    await db.pool.query(`UPDATE rate_limits SET touched_at = now() - interval '2 hours' WHERE key_id = $1`, [keyId]);
    expect((await ledger.prune()).rateRows).toBe(1);
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
      const first = createUsageLedger(db.pool, s);
      const second = createUsageLedger(other, s);
      const all = await Promise.all(
        Array.from({ length: 80 }, (_, i) => (i % 2 ? first : second).reserve(request(keyId, userId))),
      );
      expect(all.filter((d) => d.admission.verdict === 'admitted')).toHaveLength(25);
      expect(await monthlySearches(db.pool, userId)).toBe(25);
    } finally {
      await other.end();
    }
  });
});

describe('a batch, decided with each row read and written once', () => {
  /** A small deterministic generator (mulberry32), so that the sequence is the same on every run. */
  function numbers(seed: number) {
    let a = seed;
    return (below: number) => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
    };
  }

  /** What a decision says, without the ids that differ between the two accounts. */
  const shape = (d: Decided) => ({ admission: d.admission, month: d.month });

  async function storedRows(keyIds: readonly number[], userIds: readonly number[]) {
    const rates = await db.pool.query(
      `SELECT burst_admitted, burst_open_at, burst_open_count, burst_oldest_closed_at, burst_closed_at,
              burst_closed_count, sustained_admitted, sustained_open_at, sustained_open_count,
              sustained_oldest_closed_at, sustained_closed_at, sustained_closed_count
         FROM rate_limits JOIN unnest($1::bigint[]) WITH ORDINALITY AS k (id, at) ON k.id = key_id ORDER BY k.at`,
      [keyIds],
    );
    const usage = await db.pool.query(
      `SELECT month, searches FROM usage_monthly
         JOIN unnest($1::bigint[]) WITH ORDINALITY AS u (id, at) ON u.id = user_id ORDER BY u.at, month`,
      [userIds],
    );
    return { rates: rates.rows, usage: usage.rows };
  }

  it('decides every request as the same requests decided one statement each, and stores the same rows', async () => {
    // Two accounts alike: each has a user with two keys and a user with one. The first account's
    // requests go in batches, the second's one by one, at the same instants.
    const account = async () => {
      const [a, b] = [await newKey(), await newKey()];
      const second = await issueApiKey(db.pool, a.userId);
      return [
        { keyId: a.keyId, userId: a.userId },
        { keyId: second.id, userId: a.userId },
        { keyId: b.keyId, userId: b.userId },
      ];
    };
    const batched = await account();
    const alone = await account();
    const clock = testClock();
    // Small windows and a quota, so that the batches fill them, close buckets and run out.
    const s = settings('6/min', '40/hour', 30, clock.now);
    const next = numbers(2026);
    for (let round = 0; round < 60; round++) {
      const size = 1 + next(12);
      const picks = Array.from({ length: size }, () => ({
        who: next(3),
        units: next(4),
        metered: next(5) > 0,
        limited: next(8) > 0,
      }));
      const ask = (keys: typeof batched, p: (typeof picks)[number]): AdmissionAsk => ({
        ...request(keys[p.who]!.keyId, keys[p.who]!.userId, p.units, p.metered),
        limited: p.limited,
      });
      const together = await decideAdmissions(
        db.pool,
        s,
        picks.map((p) => ask(batched, p)),
      );
      const oneByOne: Decided[] = [];
      for (const p of picks) oneByOne.push(await admitOne(s, ask(alone, p)));
      expect(together.map(shape), `round ${round}`).toEqual(oneByOne.map(shape));
      clock.advance(next(40));
    }
    const ids = (keys: typeof batched) => [keys.map((k) => k.keyId), [keys[0]!.userId, keys[2]!.userId]] as const;
    expect(await storedRows(...ids(batched))).toEqual(await storedRows(...ids(alone)));
  });

  it('writes each usage and rate row once per statement, however many of the batch share it', async () => {
    const clock = testClock();
    const s = settings('1000/min', '10000/day', 0, clock.now);
    const { keyId, userId } = await newKey();
    await admitOne(s, request(keyId, userId));
    // A trigger counts the row versions that updates write, table by table.
    await db.pool.query(`
      CREATE TABLE row_writes (tbl text NOT NULL);
      CREATE FUNCTION count_row_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO row_writes VALUES (TG_TABLE_NAME); RETURN NULL; END $$;
      CREATE TRIGGER count_usage AFTER UPDATE ON usage_monthly FOR EACH ROW EXECUTE FUNCTION count_row_write();
      CREATE TRIGGER count_rate AFTER UPDATE ON rate_limits FOR EACH ROW EXECUTE FUNCTION count_row_write();`);
    try {
      const decided = await decideAdmissions(
        db.pool,
        s,
        Array.from({ length: 50 }, () => request(keyId, userId)),
      );
      expect(decided.map((d) => d.admission.verdict)).toEqual(Array(50).fill('admitted'));
      expect(decided.at(-1)!.admission).toMatchObject({ searchesThisMonth: 51, rate: { burst: { remaining: 949 } } });
      const { rows } = await db.pool.query('SELECT tbl, count(*)::int AS n FROM row_writes GROUP BY tbl ORDER BY tbl');
      expect(rows).toEqual([
        { tbl: 'rate_limits', n: 1 },
        { tbl: 'usage_monthly', n: 1 },
      ]);
    } finally {
      await db.pool.query(`
        DROP TRIGGER count_usage ON usage_monthly;
        DROP TRIGGER count_rate ON rate_limits;
        DROP FUNCTION count_row_write();
        DROP TABLE row_writes;`);
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
