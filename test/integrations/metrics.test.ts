import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { monthlySearches } from '../../src/limits/usage.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type Family, parsePrometheusText, sampleValue } from './prometheus-text.js';

/*
 * GET /metrics (METRICS_ENABLED=true): scraped after real traffic and read
 * with a strict parser of the text format; off by default, with nothing
 * installed; METRICS_TOKEN guards it; no secret or query text in it.
 */

const TOKEN = 'metrics-token-0123456789';

/** Prometheus' own checker (Debian's prometheus package) when the machine has it. */
const PROMTOOL = (process.env.PATH ?? '')
  .split(path.delimiter)
  .map((dir) => path.join(dir, 'promtool'))
  .find((file) => existsSync(file));

let db: TestDatabase;
let fakes: WebFakes;
let t: TestApp;
let apiKey: string;

async function scrape(app: TestApp = t): Promise<{ text: string; families: Map<string, Family> }> {
  const res = await app.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.body, families: parsePrometheusText(res.body) };
}

const get = (path: string, key = apiKey, app: TestApp = t) =>
  app.app.inject({ url: path, headers: { authorization: `Api-Key ${key}` } });

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  t = await buildTestApp(db, {
    ...fakes.env,
    METRICS_ENABLED: 'true',
    METRICS_TOKEN: TOKEN,
    API_THROTTLE_BURST: '4/min',
    PROVIDER_TIMEOUT_MS: '700',
  });
  const user = await createUser(db.pool, { username: 'metered' });
  apiKey = (await issueApiKey(db.pool, user.id)).key;
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe('GET /metrics', () => {
  it('tells quota refusals from rate refusals', async () => {
    const quota = await buildTestApp(db, { ...fakes.env, METRICS_ENABLED: 'true', API_MONTHLY_QUOTA: '1' });
    try {
      const user = await createUser(db.pool, { username: 'quota-metered' });
      const key = (await issueApiKey(db.pool, user.id)).key;
      expect((await get('/api/v1/suggest/?q=quota', key, quota)).statusCode).toBe(200);
      await quota.app.lifecycle.flush();
      expect((await get('/api/v1/suggest/?q=quota2', key, quota)).statusCode).toBe(429);
      const res = await quota.app.inject({ url: '/metrics' });
      const families = parsePrometheusText(res.body);
      expect(sampleValue(families, 'sift_rate_limit_refusals_total', { reason: 'quota' })).toBe(1);
      expect(sampleValue(families, 'sift_rate_limit_refusals_total', { reason: 'rate' })).toBe(0);
    } finally {
      await quota.close();
    }
  });

  it('is absent by default, with no instrumentation installed', async () => {
    const off = await buildTestApp(db, fakes.env);
    try {
      expect(off.app.metrics).toBeUndefined();
      expect((await off.app.inject({ url: '/metrics' })).statusCode).toBe(404);
      expect(off.app.hasRoute({ method: 'GET', url: '/metrics' })).toBe(false);
    } finally {
      await off.close();
    }
  });

  it('asks for the token when METRICS_TOKEN is set', async () => {
    const none = await t.app.inject({ url: '/metrics' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const wrong = await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    const open = await buildTestApp(db, { METRICS_ENABLED: 'true' });
    try {
      const res = await open.app.inject({ url: '/metrics' });
      expect(res.statusCode).toBe(200);
      parsePrometheusText(res.body);
    } finally {
      await open.close();
    }
  });

  it('counts requests, upstream calls, cache use, refusals, the pool and provider state', async () => {
    fakes.mojeek.setMode({ kind: 'status', status: 500 });
    try {
      const q = 'prometheus metrics secretquery';
      expect((await get(`/api/v1/web/?q=${encodeURIComponent(q)}&engine=provider_01,provider_02`)).statusCode).toBe(
        200,
      );
      // The same query again: provider_01 from the cache (provider_02's failure is never cached).
      expect((await get(`/api/v1/web/?q=${encodeURIComponent(q)}&engine=provider_01,provider_02`)).statusCode).toBe(
        200,
      );
      expect((await get('/api/v1/web/')).statusCode).toBe(400);
      expect((await get('/api/v1/web/?q=x')).statusCode).toBe(200);
      // Burst of 4 per minute: the fifth request of the key is refused.
      expect((await get('/api/v1/suggest/?q=x')).statusCode).toBe(429);
      expect((await t.app.inject({ url: '/api/v1/web/?q=x' })).statusCode).toBe(401);
      await t.app.health.recorder.flush();
    } finally {
      fakes.mojeek.setMode({ kind: 'normal' });
    }

    const { text, families } = await scrape();
    const web = { route: '/api/v1/web/', method: 'GET' };
    expect(sampleValue(families, 'sift_http_requests_total', { ...web, status: '200' })).toBe(3);
    expect(sampleValue(families, 'sift_http_requests_total', { ...web, status: '400' })).toBe(1);
    expect(sampleValue(families, 'sift_http_requests_total', { ...web, status: '401' })).toBe(1);
    expect(sampleValue(families, 'sift_http_request_duration_seconds_count', { ...web, status: '200' })).toBe(3);
    expect(
      sampleValue(families, 'sift_http_request_duration_seconds_bucket', { ...web, status: '200', le: '+Inf' }),
    ).toBe(3);
    expect(families.get('sift_http_request_duration_seconds')?.type).toBe('histogram');

    const ok = { provider: 'provider_01', source: 'query', outcome: 'ok' };
    expect(sampleValue(families, 'sift_upstream_calls_total', ok)).toBe(2);
    expect(sampleValue(families, 'sift_upstream_call_duration_seconds_count', ok)).toBe(2);
    const failed = { provider: 'provider_02', source: 'query', outcome: 'http_status' };
    // Both searches of the query, and q=x (every engine): a failure is never cached.
    expect(sampleValue(families, 'sift_upstream_calls_total', failed)).toBe(3);

    expect(sampleValue(families, 'sift_search_cache_hits_total', { provider: 'provider_01' })).toBe(1);
    expect(sampleValue(families, 'sift_search_cache_misses_total', { provider: 'provider_01' })).toBe(2);
    expect(sampleValue(families, 'sift_search_cache_misses_total', { provider: 'provider_02' })).toBe(3);

    expect(sampleValue(families, 'sift_rate_limit_refusals_total', { reason: 'rate' })).toBe(1);
    expect(sampleValue(families, 'sift_rate_limit_refusals_total', { reason: 'quota' })).toBe(0);

    expect(sampleValue(families, 'sift_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(families, 'sift_db_pool_max_connections')).toBe(10);
    expect(sampleValue(families, 'sift_db_pool_waiting_clients')).toBe(0);

    const engine = { group: 'engine' };
    expect(sampleValue(families, 'sift_provider_state', { ...engine, provider: 'provider_01', state: 'up' })).toBe(1);
    expect(sampleValue(families, 'sift_provider_state', { ...engine, provider: 'provider_01', state: 'down' })).toBe(0);
    expect(sampleValue(families, 'sift_provider_state', { ...engine, provider: 'provider_02', state: 'down' })).toBe(1);
    // Never asked yet (Sepia, keyless): unknown.
    expect(
      sampleValue(families, 'sift_provider_state', { provider: 'provider_06', group: 'media', state: 'unknown' }),
    ).toBe(1);

    // No provider suspended (three failures of provider_02 are under the five that would).
    expect(sampleValue(families, 'sift_provider_suspended_seconds', { ...engine, provider: 'provider_02' })).toBe(0);
    expect(sampleValue(families, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);

    // Route patterns only: no query text, no key, no upstream credential.
    expect(text).not.toContain('secretquery');
    expect(text).not.toContain(apiKey.slice(0, 12));
    expect(text).not.toContain(fakes.env.BRAVE_API_KEY!);
    expect(text).not.toContain(TOKEN);
  });

  it('shows a suspended provider with the seconds left before it is called again', async () => {
    const user = await createUser(db.pool, { username: 'suspension-metered' });
    const key = (await issueApiKey(db.pool, user.id)).key;
    fakes.marginalia.setMode({ kind: 'status', status: 429, headers: { 'retry-after': '90' } });
    try {
      const res = await get('/api/v1/web/?q=suspended%20metrics&engine=provider_03,provider_04', key);
      expect(res.json().unresponsive).toEqual([{ engine: 'provider_03', reason: 'rate_limited' }]);
    } finally {
      fakes.marginalia.setMode({ kind: 'normal' });
    }
    const { families } = await scrape();
    const left = sampleValue(families, 'sift_provider_suspended_seconds', { provider: 'provider_03', group: 'engine' });
    expect(left).toBeGreaterThan(80);
    expect(left).toBeLessThanOrEqual(90);
    expect(sampleValue(families, 'sift_provider_suspended_seconds', { provider: 'provider_04', group: 'engine' })).toBe(
      0,
    );
    t.app.health.suspensions.clear();
  });
  it('counts an MCP tool call once: the POST /mcp that carried it, not its REST request too', async () => {
    const mcp = await buildTestApp(db, { ...fakes.env, METRICS_ENABLED: 'true' });
    try {
      const user = await createUser(db.pool, { username: 'mcp-metered' });
      const key = (await issueApiKey(db.pool, user.id)).key;
      fakes.brave.setSuggestions('mcp metr', ['mcp metrics']);
      const res = await mcp.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          authorization: `Api-Key ${key}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        payload: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'suggest', arguments: { q: 'mcp metr' } },
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().result.structuredContent.suggestions).toEqual(['mcp metrics']);
      // The REST request behind the call ran (its usage counted), and only the /mcp request is in the metrics.
      await mcp.app.lifecycle.flush();
      expect(await monthlySearches(db.pool, user.id)).toBe(1);
      const families = parsePrometheusText((await mcp.app.inject({ url: '/metrics' })).body);
      const requests = families.get('sift_http_requests_total')!.samples;
      expect(requests.map((r) => [r.labels.route, r.labels.method, r.labels.status, r.value])).toEqual([
        ['/mcp', 'POST', '200', 1],
      ]);
      expect(sampleValue(families, 'sift_http_request_duration_seconds_count', { route: '/mcp' })).toBe(1);
      // A client cannot pass its own request off as one of those.
      await mcp.app.inject({
        url: '/api/v1/key/',
        headers: { authorization: `Api-Key ${key}`, 'x-sift-in-process': 'x' },
      });
      const after = parsePrometheusText((await mcp.app.inject({ url: '/metrics' })).body);
      expect(sampleValue(after, 'sift_http_requests_total', { route: '/api/v1/key/', status: '200' })).toBe(1);
    } finally {
      await mcp.close();
    }
  });

  it("keeps Prometheus' naming rule: counters end in _total, no gauge does", async () => {
    const { families } = await scrape();
    expect(families.size).toBeGreaterThan(10);
    const broken = [...families.values()]
      .filter((f) => (f.type === 'counter') !== f.name.endsWith('_total'))
      .map((f) => `${f.name} (${f.type})`);
    expect(broken).toEqual([]);
    // Node's process metrics are still there.
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('counter');
    expect(families.get('nodejs_heap_size_used_bytes')?.type).toBe('gauge');
    expect(families.get('nodejs_active_handles')?.type).toBe('gauge');
  });

  it.runIf(PROMTOOL)('passes `promtool check metrics`', async () => {
    expect((await get('/api/v1/key/')).statusCode).toBeLessThan(500);
    const { text } = await scrape();
    const check = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
    // It has teeth: a gauge named like a counter is refused.
    const bad = spawnSync(PROMTOOL!, ['check', 'metrics'], {
      input: '# HELP x_total A gauge.\n# TYPE x_total gauge\nx_total 1\n',
      encoding: 'utf8',
    });
    expect(bad.status).not.toBe(0);
  });
});
