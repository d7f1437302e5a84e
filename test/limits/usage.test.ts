import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '../../src/auth/users.js';
import { monthLabel, monthStart, nextMonthStart } from '../../src/limits/month.js';
import { createUsageRecorder, monthlySearches } from '../../src/limits/usage.js';
import { buildTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let n = 0;
const newUser = async (password?: string) =>
  (await createUser(db.pool, { username: `usage${++n}`, ...(password ? { password } : {}) })).id;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

describe('UTC months', () => {
  it('names the month and its first day in UTC, whatever the instant', () => {
    const lateDec = new Date('2030-12-31T23:59:59.999Z');
    expect(monthLabel(lateDec)).toBe('2030-12');
    expect(monthStart(lateDec)).toBe('2030-12-01');
    expect(nextMonthStart(lateDec).toISOString()).toBe('2031-01-01T00:00:00.000Z');
    expect(monthStart(new Date('2031-01-01T00:00:00Z'))).toBe('2031-01-01');
    expect(nextMonthStart(new Date('2032-02-29T12:00:00Z')).toISOString()).toBe('2032-03-01T00:00:00.000Z');
  });
});

describe('usage recorder', () => {
  it('adds buffered units per user and month and writes them in one flush', async () => {
    const recorder = createUsageRecorder(db.pool, { intervalMs: 60_000 });
    try {
      const a = await newUser();
      const b = await newUser();
      const jan = new Date('2031-01-15T10:00:00Z');
      const feb = new Date('2031-02-01T00:00:00Z');
      recorder.add(a, 4, jan);
      recorder.add(a, 1, jan);
      recorder.add(a, 2, feb);
      recorder.add(b, 1, jan);
      recorder.add(b, 0, jan); // ignored
      recorder.add(b, -3, jan); // ignored
      expect(recorder.pending(a, '2031-01-01')).toBe(5);
      expect(await monthlySearches(db.pool, a, jan)).toBe(0);
      await recorder.flush();
      expect(recorder.pending(a, '2031-01-01')).toBe(0);
      expect(await monthlySearches(db.pool, a, jan)).toBe(5);
      expect(await monthlySearches(db.pool, a, feb)).toBe(2);
      expect(await monthlySearches(db.pool, b, jan)).toBe(1);
      recorder.add(a, 3, jan);
      await recorder.flush();
      expect(await monthlySearches(db.pool, a, jan)).toBe(8);
    } finally {
      recorder.stop();
    }
  });

  it("counts a request's units in the month it is made in, also across the turn of a month", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const recorder = createUsageRecorder(db.pool, { intervalMs: 60_000 });
    try {
      const user = await newUser();
      vi.setSystemTime(new Date('2031-03-31T23:59:59.990Z'));
      recorder.add(user, 2);
      recorder.add(user, 1);
      vi.setSystemTime(new Date('2031-04-01T00:00:00.000Z'));
      recorder.add(user, 5);
      vi.setSystemTime(new Date('2031-03-15T12:00:00Z')); // a clock set back
      recorder.add(user, 1);
      expect(recorder.pending(user, '2031-03-01')).toBe(4);
      expect(recorder.pending(user, '2031-04-01')).toBe(5);
      vi.useRealTimers();
      await recorder.flush();
      expect(await monthlySearches(db.pool, user, new Date('2031-03-02T00:00:00Z'))).toBe(4);
      expect(await monthlySearches(db.pool, user, new Date('2031-04-02T00:00:00Z'))).toBe(5);
    } finally {
      vi.useRealTimers();
      recorder.stop();
    }
  });

  it('keeps the units of a failed write and writes them on the next flush', async () => {
    const recorder = createUsageRecorder(db.pool, { intervalMs: 60_000 });
    const user = await newUser();
    const at = new Date('2031-05-05T00:00:00Z');
    try {
      recorder.add(user, 2, at);
      await db.pool.query('ALTER TABLE usage_monthly RENAME TO usage_monthly_away');
      try {
        await expect(recorder.flush()).rejects.toThrow();
        recorder.add(user, 1, at);
        expect(recorder.pending(user, '2031-05-01')).toBe(3);
      } finally {
        await db.pool.query('ALTER TABLE usage_monthly_away RENAME TO usage_monthly');
      }
      await recorder.flush();
      expect(await monthlySearches(db.pool, user, at)).toBe(3);
    } finally {
      recorder.stop();
    }
  });

  it('drops the units of a deleted user without losing the rest of the batch', async () => {
    const recorder = createUsageRecorder(db.pool, { intervalMs: 60_000 });
    try {
      const gone = await newUser();
      const kept = await newUser();
      const at = new Date('2031-06-06T00:00:00Z');
      recorder.add(gone, 1, at);
      recorder.add(kept, 6, at);
      await db.pool.query('DELETE FROM users WHERE id = $1', [gone]);
      await recorder.flush();
      expect(await monthlySearches(db.pool, kept, at)).toBe(6);
      expect(recorder.pending(gone, '2031-06-01')).toBe(0);
    } finally {
      recorder.stop();
    }
  });

  it('counts exactly when flushes and additions overlap', async () => {
    const recorder = createUsageRecorder(db.pool, { intervalMs: 5 });
    try {
      const user = await newUser();
      const at = new Date('2031-07-07T00:00:00Z');
      for (let i = 0; i < 50; i++) {
        recorder.add(user, 1, at);
        if (i % 10 === 0) void recorder.flush();
        await new Promise((r) => setTimeout(r, 2));
      }
      await recorder.flush();
      expect(await monthlySearches(db.pool, user, at)).toBe(50);
    } finally {
      recorder.stop();
    }
  });
});

describe('keys page', () => {
  it('shows the searches of this month', async () => {
    const t = await buildTestApp(db, { LOG_LEVEL: 'silent' });
    try {
      const password = 'correct horse battery staple';
      const userId = await newUser(password);
      const username = `usage${n}`;
      await db.pool.query('INSERT INTO usage_monthly (user_id, month, searches) VALUES ($1, $2, 42)', [
        userId,
        monthStart(new Date()),
      ]);

      const form = await t.app.inject({ url: '/login' });
      const cookies = (res: { cookies: { name: string; value: string }[] }) =>
        Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));
      const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
      const login = await t.app.inject({
        method: 'POST',
        url: '/login',
        cookies: cookies(form),
        payload: new URLSearchParams({ _csrf: csrf, username, password }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(login.statusCode).toBe(302);
      const page = await t.app.inject({ url: '/settings/keys', cookies: { ...cookies(form), ...cookies(login) } });
      expect(page.statusCode).toBe(200);
      expect(page.body).toMatch(/Searches this month: <strong>42<\/strong>/);
    } finally {
      await t.close();
    }
  });
});
