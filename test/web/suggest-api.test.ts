import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { monthlySearches } from '../../src/limits/usage.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { buildTestApp, type TestApp, UNTHROTTLED } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let fakes: WebFakes;
let t: TestApp;
let noKey: TestApp;
let apiKey: string;
let userId: number;
let counter = 0;
const uniq = (base: string) => `${base} ${++counter}`;

async function suggest(q: string | null, app: TestApp = t) {
  const qs = q === null ? '' : `?${new URLSearchParams({ q })}`;
  const res = await app.app.inject({ url: `/api/v1/suggest/${qs}`, headers: { authorization: `Api-Key ${apiKey}` } });
  return { status: res.statusCode, body: res.json() };
}

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  t = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, PROVIDER_TIMEOUT_MS: '500' });
  const { BRAVE_SUGGEST_API_KEY: _omit, ...withoutSuggestKey } = fakes.env;
  noKey = await buildTestApp(db, { ...withoutSuggestKey, ...UNTHROTTLED });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'suggester'));
});

afterEach(() => {
  fakes.brave.setMode({ kind: 'normal' });
  fakes.brave.failWith(null);
  fakes.resetRequests();
});

afterAll(async () => {
  await t?.close();
  await noKey?.close();
  await fakes?.close();
  await db?.drop();
});

describe('GET /api/v1/suggest/', () => {
  it('returns 7 suggestions from Brave Suggest, asked for 7 (Brave answers 5 without count) with the suggest key', async () => {
    const q = uniq('albert');
    fakes.brave.setSuggestions(q, ['albert einstein', 'albert  camus', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7']);
    const res = await suggest(`  ${q}  `);
    expect(res).toEqual({
      status: 200,
      body: { query: q, suggestions: ['albert einstein', 'albert camus', 'a1', 'a2', 'a3', 'a4', 'a5'] },
    });
    const [req] = fakes.brave.requestsTo('suggest');
    expect(req!.query.get('q')).toBe(q);
    expect(req!.query.get('count')).toBe('7');
    expect(req!.headers['x-subscription-token']).toBe(fakes.brave.suggestKey);
  });

  it('caches suggestions: a repeated query makes no second upstream call', async () => {
    const q = uniq('cache me');
    const first = await suggest(q);
    const second = await suggest(q);
    expect(second).toEqual(first);
    expect(fakes.brave.requestsTo('suggest')).toHaveLength(1);
  });

  it('works with only the suggest key (BRAVE_API_KEY unset), but not when provider_01 is disabled', async () => {
    const { BRAVE_API_KEY: _omit, ...suggestOnly } = fakes.env;
    const onlySuggest = await buildTestApp(db, { ...suggestOnly, ...UNTHROTTLED });
    const disabled = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, DISABLED_PROVIDERS: 'provider_01' });
    try {
      const q = uniq('suggest only');
      fakes.brave.setSuggestions(q, ['suggest only works']);
      expect(await suggest(q, onlySuggest)).toEqual({
        status: 200,
        body: { query: q, suggestions: ['suggest only works'] },
      });
      expect(fakes.brave.requestsTo('suggest')).toHaveLength(1);
      const q2 = uniq('disabled');
      expect(await suggest(q2, disabled)).toEqual({ status: 200, body: { query: q2, suggestions: [] } });
      expect(fakes.brave.requestsTo('suggest')).toHaveLength(1);
    } finally {
      await onlySuggest.close();
      await disabled.close();
    }
  });

  it('answers an empty list without calling Brave when no suggest key is configured', async () => {
    const q = uniq('no key');
    expect(await suggest(q, noKey)).toEqual({ status: 200, body: { query: q, suggestions: [] } });
    expect(fakes.brave.requests).toHaveLength(0);
  });

  it('answers an empty list when Brave Suggest fails, records provider_01 down, and does not cache the failure', async () => {
    const q = uniq('broken');
    fakes.brave.failWith('rate_limited');
    expect(await suggest(q)).toEqual({ status: 200, body: { query: q, suggestions: [] } });
    await t.app.health.recorder.flush();
    const { rows } = await db.pool.query("SELECT ok FROM provider_status WHERE provider = 'provider_01'");
    expect(rows[0]?.ok).toBe(false);
    fakes.brave.failWith(null);
    const again = await suggest(q);
    expect((again.body as { suggestions: string[] }).suggestions.length).toBe(7);
    expect(fakes.brave.requestsTo('suggest')).toHaveLength(2);
  });

  it('answers within the timeout when Brave Suggest hangs', async () => {
    fakes.brave.setMode({ kind: 'hang' });
    // The hung upstream never answers: only the 700 ms timeout can end the request (how soon: the bench).
    const res = await suggest(uniq('hang'));
    expect((res.body as { suggestions: string[] }).suggestions).toEqual([]);
  });

  it('requires q', async () => {
    expect(await suggest(null)).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
    expect(await suggest('   ')).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
  });

  it('counts one search per request, also without a suggest key, never for a 400', async () => {
    await t.app.lifecycle.flush();
    await noKey.app.lifecycle.flush();
    await db.pool.query('DELETE FROM usage_monthly');
    await suggest(uniq('count'));
    await suggest(uniq('count'), noKey);
    await suggest(null);
    await t.app.lifecycle.flush();
    await noKey.app.lifecycle.flush();
    expect(await monthlySearches(db.pool, userId)).toBe(2);
  });
});
