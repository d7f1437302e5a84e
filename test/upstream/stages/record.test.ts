import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderCall } from '../../../src/providers/types.js';
import { HealthRecorder } from '../../../src/upstream/health-recorder.js';
import { HttpFailure } from '../../../src/upstream/http.js';
import { recordCalls } from '../../../src/upstream/stages/record.js';
import { ProviderSuspensions } from '../../../src/upstream/suspension.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/* Stage 6, record (src/upstream/stages/record.ts): health, suspensions and metrics, on real PostgreSQL. */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query('TRUNCATE provider_status');
});

const call: ProviderCall<unknown> = {
  provider: 'provider_06',
  request: { url: 'http://127.0.0.1:9/rows?page=50' },
  parse: (b) => b,
  refusal: (status, body) =>
    status === 400 && body.includes('page')
      ? { cause: 'caller', parameter: 'page', upstreamParameter: 'page', value: '50', message: 'no page 50' }
      : null,
};

function stage() {
  const recorder = new HealthRecorder(db.pool, { statusWriteMs: 0, historyFlushMs: 0 });
  const suspensions = new ProviderSuspensions({ afterFailures: 1, firstMs: 60_000, maxMs: 60_000 });
  const calls: string[] = [];
  const record = recordCalls({
    recorder,
    suspensions,
    onCall: (_provider, source, outcome) => calls.push(`${source} ${outcome}`),
  });
  const status = async () => {
    await recorder.flush();
    const { rows } = await db.pool.query<{ ok: boolean }>('SELECT ok FROM provider_status WHERE provider = $1', [
      'provider_06',
    ]);
    return rows.map((r) => r.ok);
  };
  return { record, suspensions, calls, status, close: () => recorder.close() };
}

describe('the record stage', () => {
  it("answers a refusal of the caller's parameter as the caller's, recording nothing against the provider", async () => {
    const s = stage();
    try {
      const failure = s.record.failed(
        call,
        'query',
        new HttpFailure('http_status', 'HTTP 400', 400, undefined, 'bad page'),
        0,
      );
      expect(failure).toMatchObject({ kind: 'refused', refusal: { cause: 'caller', parameter: 'page' } });
      expect(await s.status()).toEqual([]);
      expect(s.suspensions.remainingMs('provider_06')).toBe(0);
      expect(s.calls).toEqual(['query refused']);
    } finally {
      await s.close();
    }
  });

  it("records a search's failure, which counts toward a suspension, and a success, which lifts it", async () => {
    const s = stage();
    try {
      const failure = s.record.failed(call, 'query', new HttpFailure('http_status', 'HTTP 500', 500), 0);
      expect(failure).toMatchObject({ kind: 'http_status', provider: 'provider_06' });
      expect(await s.status()).toEqual([false]);
      expect(s.suspensions.remainingMs('provider_06')).toBeGreaterThan(0);
      s.record.succeeded('provider_06', 'probe', 0);
      expect(await s.status()).toEqual([true]);
      expect(s.suspensions.remainingMs('provider_06')).toBe(0);
      expect(s.calls).toEqual(['query http_status', 'probe ok']);
    } finally {
      await s.close();
    }
  });

  it("never extends a suspension by a probe's failure", async () => {
    const s = stage();
    try {
      s.record.failed(call, 'probe', new HttpFailure('timeout', 'no answer'), 0);
      expect(await s.status()).toEqual([false]);
      expect(s.suspensions.remainingMs('provider_06')).toBe(0);
    } finally {
      await s.close();
    }
  });
});
