import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { HealthRecorder } from '../../src/providers/health-recorder.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';

/*
 * The write-behind health recorder against a real database: what it writes,
 * the per-provider throttle, the hourly history and how it copes with a
 * database that is gone.
 */

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

    clock += 1;
    recorder.record({ provider: 'provider_01', ok: false, error: 'HTTP 500: boom', latencyMs: 10, source: 'probe' });
    await recorder.flush();
    const down = await status('provider_01');
    expect(down).toMatchObject({ ok: false, source: 'probe', last_error: 'HTTP 500: boom' });
    expect(down!.last_ok_at!.getTime()).toBe(up!.last_ok_at!.getTime());
    expect(down!.checked_at.getTime()).toBeGreaterThanOrEqual(up!.checked_at.getTime());
  });

  it('writes the state change at once, without an explicit flush (off the caller path)', async () => {
    recorder.record({ provider: 'weather', ok: false, error: 'x', latencyMs: 1, source: 'query' });
    expect(await status('weather')).toBeUndefined();
    for (let i = 0; i < 50 && !(await status('weather')); i++) await new Promise((r) => setTimeout(r, 20));
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

  it('throttles identical outcomes to one write a minute per provider, but writes every change at once', async () => {
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'query' });
    await recorder.flush();
    const first = (await status('provider_02'))!.checked_at;

    clock += 30_000; // same outcome within the minute: dropped
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'query' });
    await recorder.flush();
    expect((await status('provider_02'))!.checked_at.getTime()).toBe(first.getTime());

    clock += 1_000; // a change: written at once
    recorder.record({ provider: 'provider_02', ok: false, error: 'down now', latencyMs: 1, source: 'query' });
    await recorder.flush();
    expect(await status('provider_02')).toMatchObject({ ok: false, last_error: 'down now' });

    clock += 1_000; // and back
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'query' });
    await recorder.flush();
    const back = (await status('provider_02'))!;
    expect(back.ok).toBe(true);

    clock += 59_000; // same outcome, under a minute since the last write: dropped
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'probe' });
    await recorder.flush();
    expect((await status('provider_02'))!.source).toBe('query');

    clock += 2_000; // over a minute: written again
    recorder.record({ provider: 'provider_02', ok: true, latencyMs: 1, source: 'probe' });
    await recorder.flush();
    const later = (await status('provider_02'))!;
    expect(later.source).toBe('probe');
    expect(later.checked_at.getTime()).toBeGreaterThan(back.checked_at.getTime());
  });

  it('throttles each provider on its own', async () => {
    recorder.record({ provider: 'provider_03', ok: true, latencyMs: 1, source: 'query' });
    recorder.record({ provider: 'provider_04', ok: true, latencyMs: 1, source: 'query' });
    await recorder.flush();
    expect(await status('provider_03')).toBeDefined();
    expect(await status('provider_04')).toBeDefined();
  });

  it('counts every outcome, throttled or not, into hourly buckets with latency sum and max', async () => {
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
    const started = performance.now();
    for (let i = 0; i < 1000; i++) {
      r.record({ provider: 'provider_07', ok: i % 2 === 0, error: 'e', latencyMs: 1, source: 'query' });
    }
    // record() never waits for the database: 1000 calls take far less than one connection attempt each would.
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(r.flush()).resolves.toBeUndefined();
    expect(warnings.length).toBeGreaterThan(0);
    await r.close(500);
    await dead.end();
  });
});
