import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { queueTransitions } from '../../src/alerts/transitions.js';
import { HealthRecorder, type StatusWrite, type Transition } from '../../src/upstream/health-recorder.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { startDbProxy } from '../helpers/db-proxy.js';

/*
 * The write-behind health recorder against a real database: what it writes
 * (the latest observation by observation time, across processes), the
 * transitions it decides against the stored state, how its writes are
 * spaced, the hourly history and how it copes with a database that is gone.
 */

/** Waits for a condition, polling, up to a deadline. */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface StatusRowDb {
  provider: string;
  ok: boolean;
  source: string;
  last_error: string;
  last_ok_at: Date | null;
  checked_at: Date;
}

describe('HealthRecorder', () => {
  let db: TestDatabase;
  let clock = 0;
  let recorder: HealthRecorder;

  const status = async (provider: string) =>
    (await db.pool.query<StatusRowDb>('SELECT * FROM provider_status WHERE provider = $1', [provider])).rows[0];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await recorder?.close();
    await db.drop();
  });
  beforeEach(async () => {
    await recorder?.close();
    await db.pool.query('DELETE FROM provider_status; DELETE FROM provider_history');
    clock = 0;
    recorder = new HealthRecorder(db.pool, { clock: () => clock, historyFlushMs: 0 });
  });

  it('writes a success as up with last_ok_at, and a failure as down keeping last_ok_at and the error', async () => {
    recorder.record({ provider: 'provider_01', ok: true, latencyMs: 10, source: 'query' });
    await recorder.flush();
    const up = await status('provider_01');
    expect(up).toMatchObject({ ok: true, source: 'query', last_error: '' });
    expect(up!.last_ok_at).toBeInstanceOf(Date);

    recorder.record({ provider: 'provider_01', ok: false, error: 'HTTP 500: boom', latencyMs: 10, source: 'probe' });
    await recorder.flush();
    const down = await status('provider_01');
    expect(down).toMatchObject({ ok: false, source: 'probe', last_error: 'HTTP 500: boom' });
    expect(down!.last_ok_at!.getTime()).toBe(up!.last_ok_at!.getTime());
    expect(down!.checked_at.getTime()).toBeGreaterThanOrEqual(up!.checked_at.getTime());
  });

  it('writes an observation soon, without an explicit flush (off the caller path)', async () => {
    recorder.record({ provider: 'weather', ok: false, error: 'x', latencyMs: 1, source: 'query' });
    expect(await status('weather')).toBeUndefined();
    await waitFor(async () => (await status('weather')) !== undefined);
    expect(await status('weather')).toMatchObject({ ok: false });
  });

  it('cuts the stored error to 300 characters on one line', async () => {
    recorder.record({
      provider: 'weather',
      ok: false,
      error: `line1\nline2 ${'e'.repeat(500)}`,
      latencyMs: 1,
      source: 'query',
    });
    await recorder.flush();
    const row = await status('weather');
    expect(row!.last_error.length).toBe(300);
    expect(row!.last_error.startsWith('line1 line2 eee')).toBe(true);
  });

  it('writes the latest of the observations made between two writes, and a repeated outcome again', async () => {
    const t = (s: number) => new Date(Date.UTC(2026, 0, 10, 10, 0, s));
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'query', at: t(1) });
    recorder.record({ provider: 'provider_02', ok: false, error: 'down now', latencyMs: 1, source: 'query', at: t(2) });
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'probe', at: t(3) });
    await recorder.flush();
    expect(await status('provider_02')).toMatchObject({
      ok: true,
      source: 'probe',
      checked_at: t(3),
      last_ok_at: t(3),
    });

    // The same outcome again: written again (its checked_at), no per-process throttle in the way.
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'query', at: t(4) });
    await recorder.flush();
    expect(await status('provider_02')).toMatchObject({ ok: true, source: 'query', checked_at: t(4) });

    // A success made before a failure but reported after it: the failure stays the state, the success
    // still says when it last worked.
    recorder.record({
      provider: 'provider_02',
      ok: false,
      error: 'later failure',
      latencyMs: 1,
      source: 'query',
      at: t(6),
    });
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'query', at: t(5) });
    await recorder.flush();
    expect(await status('provider_02')).toMatchObject({
      ok: false,
      last_error: 'later failure',
      checked_at: t(6),
      last_ok_at: t(5),
    });
  });

  it('never lets an older observation from another process replace a newer stored one', async () => {
    const other = new HealthRecorder(db.pool, { historyFlushMs: 0 });
    try {
      const t = (s: number) => new Date(Date.UTC(2026, 0, 10, 11, 0, s));
      recorder.record({ provider: 'provider_03', ok: false, error: 'newer', latencyMs: 1, source: 'query', at: t(20) });
      await recorder.flush();
      other.record({ provider: 'provider_03', ok: true, latencyMs: 1, source: 'query', at: t(10) });
      other.record({ provider: 'provider_04', ok: true, latencyMs: 1, source: 'query', at: t(10) });
      await other.flush();
      // Its success is the latest one known, so it is when the provider last worked; the state stays.
      expect(await status('provider_03')).toMatchObject({
        ok: false,
        last_error: 'newer',
        checked_at: t(20),
        last_ok_at: t(10),
      });
      expect(await status('provider_04')).toMatchObject({ ok: true, checked_at: t(10) });

      other.record({ provider: 'provider_03', ok: true, latencyMs: 1, source: 'query', at: t(30) });
      await other.flush();
      expect(await status('provider_03')).toMatchObject({
        ok: true,
        last_error: '',
        checked_at: t(30),
        last_ok_at: t(30),
      });
    } finally {
      await other.close();
    }
  });

  it('decides each transition against the stored state, whichever process wrote it', async () => {
    const seen: { by: string; transitions: Transition[] }[] = [];
    const make = (by: string) =>
      new HealthRecorder(db.pool, {
        historyFlushMs: 0,
        onTransitions: async (_client, transitions) => {
          seen.push({ by, transitions: [...transitions] });
        },
      });
    const [w0, w1] = [make('w0'), make('w1')];
    try {
      const t = (s: number) => new Date(Date.UTC(2026, 0, 10, 12, 0, s));
      const observe = async (w: HealthRecorder, ok: boolean, s: number) => {
        w.record({ provider: 'provider_08', ok, error: 'HTTP 500', latencyMs: 1, source: 'query', at: t(s) });
        await w.flush();
      };
      await observe(w0, true, 1); // first observation: no transition
      await observe(w1, false, 2); // up to down, seen by w1
      await observe(w0, true, 3); // back up, seen by w0 (whose own last write was already "up")
      await observe(w0, true, 4); // still up: nothing
      await observe(w1, false, 5); // down again, seen by w1 (whose own last write was already "down")
      await observe(w0, true, 4.5); // older than the stored failure: nothing
      expect(seen.map((s) => [s.by, s.transitions.map((x) => [x.provider, x.wasOk, x.ok, x.at])])).toEqual([
        ['w1', [['provider_08', true, false, t(2)]]],
        ['w0', [['provider_08', false, true, t(3)]]],
        ['w1', [['provider_08', true, false, t(5)]]],
      ]);
      expect(await status('provider_08')).toMatchObject({ ok: false, checked_at: t(5) });
    } finally {
      await Promise.all([w0.close(), w1.close()]);
    }
  });

  it('queues every transition exactly once when several processes write at the same moments', async () => {
    await db.pool.query('DELETE FROM alert_outbox');
    const writers = [0, 1, 2, 3].map(
      () =>
        new HealthRecorder(db.pool, {
          historyFlushMs: 0,
          onTransitions: queueTransitions({ targets: ['receiver'], windowMs: 0 }),
        }),
    );
    try {
      const base = Date.UTC(2026, 0, 10, 13, 0, 0);
      writers[0]!.record({ provider: 'provider_09', ok: true, latencyMs: 1, source: 'query', at: new Date(base) });
      await writers[0]!.flush();
      // Each round, every writer reports an outcome (alternating patterns, distinct times) and all
      // write at once: the stored state may flip several times per round, in an order the lock decides.
      let newest = { at: base, ok: true };
      for (let round = 1; round <= 25; round++) {
        await Promise.all(
          writers.map((w, i) => {
            const at = base + round * 1000 + ((i * 7 + round) % 4) * 10;
            const ok = (round + i) % 3 !== 0;
            if (at > newest.at) newest = { at, ok };
            w.record({ provider: 'provider_09', ok, error: 'x', latencyMs: 1, source: 'query', at: new Date(at) });
            return w.flush();
          }),
        );
      }
      const { rows } = await db.pool.query<{ old_ok: boolean; new_ok: boolean; changed_at: Date }>(
        `SELECT old_ok, new_ok, changed_at FROM alert_outbox WHERE provider = 'provider_09' ORDER BY id`,
      );
      expect(rows.length).toBeGreaterThan(0);
      // One chain: each change starts where the one before ended (none missed), changes the state (none
      // spurious), starts at the first stored state and ends at the stored one, the newest observation's.
      expect(rows[0]!.old_ok).toBe(true);
      for (const [i, r] of rows.entries()) {
        expect(r.new_ok).toBe(!r.old_ok);
        if (i > 0) expect(r.old_ok).toBe(rows[i - 1]!.new_ok);
        if (i > 0) expect(r.changed_at.getTime()).toBeGreaterThan(rows[i - 1]!.changed_at.getTime());
      }
      expect(rows.at(-1)!.new_ok).toBe(newest.ok);
      expect(await status('provider_09')).toMatchObject({ ok: newest.ok, checked_at: new Date(newest.at) });
    } finally {
      await Promise.all(writers.map((w) => w.close()));
    }
  });

  it('shares one write among the observations made before it, spaced statusWriteMs apart on its clock', async () => {
    const writes: StatusWrite[] = [];
    const spaced = new HealthRecorder(db.pool, { clock: () => clock, historyFlushMs: 0, statusWriteMs: 3_600_000 });
    spaced.onStatusWritten((w) => writes.push(w));
    const t = (s: number) => new Date(Date.UTC(2026, 0, 10, 14, 0, s));
    try {
      // Nothing written for a while: the first observation is written at once (off the caller's turn).
      spaced.record({ provider: 'provider_10', ok: true, latencyMs: 1, source: 'query', at: t(1) });
      spaced.record({ provider: 'provider_11', ok: false, error: 'x', latencyMs: 1, source: 'query', at: t(1) });
      await waitFor(() => writes.length === 1);
      expect([...writes[0]!.providers].sort()).toEqual(['provider_10', 'provider_11']);

      // Within the spacing (an hour here, on a clock that does not move): kept for a later write.
      spaced.record({ provider: 'provider_10', ok: false, error: 'x', latencyMs: 1, source: 'query', at: t(2) });
      spaced.record({ provider: 'provider_10', ok: true, latencyMs: 1, source: 'query', at: t(3) });
      await db.pool.query('SELECT 1');
      expect(writes).toHaveLength(1);
      expect((await status('provider_10'))!.checked_at).toEqual(t(1));
      // A flush (shutdown, the end of a probe run) writes them at once: the latest of the two.
      await spaced.flush();
      expect(writes).toHaveLength(2);
      expect(writes[1]!.providers).toEqual(['provider_10']);
      expect(await status('provider_10')).toMatchObject({ ok: true, checked_at: t(3) });

      // Once the clock has passed the spacing, the next observation is written at once again.
      clock += 3_600_000;
      spaced.record({ provider: 'provider_11', ok: true, latencyMs: 1, source: 'query', at: t(4) });
      await waitFor(() => writes.length === 3);
      expect(writes[2]!.providers).toEqual(['provider_11']);
      expect(await status('provider_11')).toMatchObject({ ok: true, checked_at: t(4) });
    } finally {
      await spaced.close();
    }
  });

  it('keeps an observation the database did not take and writes it once the database is back', async () => {
    const proxy = await startDbProxy(db.url);
    const pool = createPool(proxy.url, { connectionTimeoutMillis: 500 });
    const warnings: unknown[] = [];
    const r = new HealthRecorder(pool, {
      historyFlushMs: 0,
      statusWriteMs: 20,
      log: { warn: (o) => warnings.push(o), debug: () => {} },
    });
    try {
      await proxy.setMode('refuse');
      r.record({ provider: 'provider_12', ok: false, error: 'during the outage', latencyMs: 1, source: 'query' });
      await waitFor(() => warnings.length > 0);
      expect(await status('provider_12')).toBeUndefined();
      await proxy.setMode('pass');
      // Retried on its own (a growing delay from 20 ms), with no further observation.
      await waitFor(async () => (await status('provider_12')) !== undefined);
      expect(await status('provider_12')).toMatchObject({ ok: false, last_error: 'during the outage' });
    } finally {
      await r.close(1000);
      await pool.end();
      await proxy.close();
    }
  });

  it('counts every outcome into hourly buckets with latency sum and max', async () => {
    const at = new Date('2026-01-10T10:15:00Z');
    const later = new Date('2026-01-10T10:59:59Z');
    const nextHour = new Date('2026-01-10T11:00:00Z');
    recorder.record({ provider: 'provider_05', ok: true, latencyMs: 100, source: 'query', at });
    recorder.record({ provider: 'provider_05', ok: true, latencyMs: 300, source: 'query', at: later });
    recorder.record({ provider: 'provider_05', ok: false, error: 'x', latencyMs: 3000, source: 'query', at: later });
    recorder.record({ provider: 'provider_05', ok: true, latencyMs: 50, source: 'query', at: nextHour });
    await recorder.flush();
    // a second batch adds to the same bucket
    recorder.record({ provider: 'provider_05', ok: true, latencyMs: 20, source: 'query', at });
    await recorder.flush();
    const { rows } = await db.pool.query(
      `SELECT hour, successes, failures, latency_sum_ms::int AS sum, latency_max_ms AS max
         FROM provider_history WHERE provider = 'provider_05' ORDER BY hour`,
    );
    expect(rows).toEqual([
      { hour: new Date('2026-01-10T10:00:00Z'), successes: 3, failures: 1, sum: 3420, max: 3000 },
      { hour: new Date('2026-01-10T11:00:00Z'), successes: 1, failures: 0, sum: 50, max: 50 },
    ]);
  });

  it('deletes history older than 30 days on its periodic pass', async () => {
    await db.pool.query(
      `INSERT INTO provider_history (provider, hour, successes) VALUES
         ('provider_06', date_trunc('hour', now() - interval '31 days'), 1),
         ('provider_06', date_trunc('hour', now() - interval '29 days'), 1)`,
    );
    const periodic = new HealthRecorder(db.pool, { historyFlushMs: 50 });
    try {
      let count = 2;
      for (let i = 0; i < 60 && count === 2; i++) {
        await new Promise((r) => setTimeout(r, 25));
        count = Number(
          (await db.pool.query(`SELECT count(*) FROM provider_history WHERE provider = 'provider_06'`)).rows[0].count,
        );
      }
      expect(count).toBe(1);
    } finally {
      await periodic.close();
    }
  });

  it('never throws or blocks the caller when the database is gone', async () => {
    const dead = createPool('postgres://nobody:x@127.0.0.1:1/none', { connectionTimeoutMillis: 200 });
    const warnings: unknown[] = [];
    const r = new HealthRecorder(dead, { historyFlushMs: 0, log: { warn: (o) => warnings.push(o), debug: () => {} } });
    // record() never waits for the database: it returns nothing to wait on, and throws nothing.
    for (let i = 0; i < 1000; i++) {
      expect(
        r.record({ provider: 'provider_07', ok: i % 2 === 0, error: 'e', latencyMs: 1, source: 'query' }),
      ).toBeUndefined();
    }
    await expect(r.flush()).resolves.toBeUndefined();
    expect(warnings.length).toBeGreaterThan(0);
    await r.close(500);
    await dead.end();
  });
});
