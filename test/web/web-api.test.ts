import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { monthlySearches } from '../../src/limits/usage.js';
import { startWebFakes, type WebFakes } from '../fakes/index.js';
import { buildTestApp, type TestApp, UNTHROTTLED, providerStatusRow, searchesCounted } from '../helpers/app.js';
import { createUserWithKey } from '../helpers/auth.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const TIMEOUT_MS = 700;

let db: TestDatabase;
let fakes: WebFakes;
let t: TestApp;
let apiKey: string;
let userId: number;
let counter = 0;

/** A query no other test uses (the response cache is process-wide). */
const uniq = (base: string) => `${base} ${++counter}`;

async function get(path: string, app: TestApp = t, key = apiKey) {
  const res = await app.app.inject({ method: 'GET', url: path, headers: { authorization: `Api-Key ${key}` } });
  return {
    status: res.statusCode,
    body: res.json() as Record<string, unknown> & { results: Record<string, unknown>[] },
  };
}
const web = (params: Record<string, string>, app?: TestApp) => get(`/api/v1/web/?${new URLSearchParams(params)}`, app);

const usage = (app: TestApp = t) => searchesCounted(app, db, userId);

const healthRow = (provider: string) => providerStatusRow(t, db, provider);

beforeAll(async () => {
  db = await createTestDatabase();
  fakes = await startWebFakes();
  t = await buildTestApp(db, { ...fakes.env, ...UNTHROTTLED, PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS) });
  ({ userId, apiKey } = await createUserWithKey(db.pool, 'websearcher'));
});

afterEach(() => {
  for (const f of [fakes.brave, fakes.mojeek, fakes.marginalia, fakes.staan]) {
    f.setMode({ kind: 'normal' });
    f.failWith(null);
  }
  fakes.resetRequests();
});

afterAll(async () => {
  await t?.close();
  await fakes?.close();
  await db?.drop();
});

describe('GET /api/v1/web/ validation', () => {
  it('asks for an API key before validating parameters', async () => {
    const res = await t.app.inject({ url: '/api/v1/web/' });
    expect(res.statusCode).toBe(401);
  });

  it('answers 400 with a message per invalid field, all at once, and calls no engine', async () => {
    expect(await web({})).toEqual({ status: 400, body: { q: 'This query parameter is required.' } });
    expect(await web({ q: 'x', engine: 'foo' })).toEqual({
      status: 400,
      body: { engine: 'Unknown engine(s): foo. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").' },
    });
    expect(await web({ q: 'x', page: '2.5' })).toEqual({ status: 400, body: { page: 'Must be an integer.' } });
    expect(await web({ q: 'x', date: 'century' })).toEqual({
      status: 400,
      body: { date: 'Must be d (day), w (week), m (month) or y (year).' },
    });
    expect(await web({ q: ' ', engine: 'provider_01,bing', page: '' })).toEqual({
      status: 400,
      body: {
        q: 'This query parameter is required.',
        engine: 'Unknown engine(s): bing. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").',
        page: 'Must be an integer.',
      },
    });
    const long = await web({ q: 'a'.repeat(2001) });
    expect(long.status).toBe(400);
    expect(Object.keys(long.body)).toEqual(['q']);
    expect(fakes.brave.requests).toHaveLength(0);
    expect(fakes.mojeek.requests).toHaveLength(0);
    expect(await usage()).toBe(0);
  });

  it('never answers 500 to odd query strings', async () => {
    for (const qs of [
      'q=a&q=b',
      'q[]=x',
      'q=%FF%FE',
      'q=x&page=1&page=2',
      'q=x&engine=',
      'q=x&engine=%2C',
      'q=%00',
      'q=x&lang=%3Cscript%3E',
      'q=x&page=%EF%BC%92',
      `q=${'%F0%9F%98%80'.repeat(300)}`,
    ]) {
      const res = await get(`/api/v1/web/?${qs}`);
      expect(res.status, qs).toBeLessThan(500);
    }
  });

  it('takes the last value of a repeated parameter', async () => {
    const q = uniq('repeat');
    const res = await get(`/api/v1/web/?q=ignored&q=${encodeURIComponent(q)}&engine=provider_02`);
    expect(res.status).toBe(200);
    expect(res.body.query).toBe(q);
  });
});

describe('GET /api/v1/web/ engine requests', () => {
  it('maps page, language, safe search and date to Brave web search', async () => {
    const q = uniq('brave mapping');
    await web({ q, engine: 'provider_01', page: '3', lang: 'EN', safe: 'off', date: 'w' });
    const [req] = fakes.brave.requestsTo('web');
    expect(Object.fromEntries(req!.query)).toEqual({
      q,
      count: '10',
      offset: '2',
      safesearch: 'off',
      search_lang: 'en',
      country: 'US',
      freshness: 'pw',
    });
    expect(req!.headers['x-subscription-token']).toBe(fakes.brave.key);

    const q2 = uniq('brave defaults');
    await web({ q: q2, engine: 'provider_01', lang: 'ja', date: '' });
    const second = fakes.brave.requestsTo('web')[1]!;
    expect(Object.fromEntries(second.query)).toEqual({
      q: q2,
      count: '10',
      offset: '0',
      safesearch: 'strict',
      search_lang: 'jp',
    });
  });

  it("answers in every language Sift maps with values from Brave's lists (the fake refuses anything else with 422)", async () => {
    for (const [lang, searchLang, country] of [
      ['pt', 'pt-pt', 'PT'],
      ['pt-BR', 'pt-br', 'BR'],
      ['ja', 'jp', null],
      ['zh', 'zh-hans', null],
      ['zh-TW', 'zh-hant', 'TW'],
      ['no', 'nb', null],
      ['el', null, null],
    ] as const) {
      fakes.resetRequests();
      const res = await web({ q: uniq(`brave lang ${lang}`), engine: 'provider_01', lang });
      expect([lang, res.status, res.body.unresponsive]).toEqual([lang, 200, []]);
      expect(res.body.results.length).toBe(10);
      const [req] = fakes.brave.requestsTo('web');
      expect([lang, req!.query.get('search_lang'), req!.query.get('country')]).toEqual([lang, searchLang, country]);
    }
    expect((await healthRow('provider_01'))?.ok).toBe(true);
  });

  it('does not ask Brave past page 10 (its offset stops at 9), so a deep page never reads as Brave failing', async () => {
    const res = await web({ q: uniq('brave deep page'), engine: 'provider_01 provider_03', page: '11' });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([]);
    expect(fakes.brave.requestsTo('web')).toHaveLength(0);
    expect(fakes.marginalia.requests).toHaveLength(1);
  });

  it("maps page, language, safe search and date to Mojeek's own parameters (s, t, lb/lbb, safe, since)", async () => {
    const q = uniq('mojeek mapping');
    await web({ q, engine: 'provider_02', page: '3', lang: 'fr', safe: 'off', date: 'd' });
    await web({ q, engine: 'provider_02' });
    const [req, plain] = fakes.mojeek.requests;
    expect(Object.fromEntries(req!.query)).toEqual({
      q,
      s: '21',
      t: '10',
      safe: '0',
      lb: 'FR',
      lbb: '10',
      since: 'day',
      fmt: 'json',
      api_key: fakes.mojeek.key,
    });
    expect(Object.fromEntries(plain!.query)).toEqual({
      q,
      s: '1',
      t: '10',
      safe: '1',
      fmt: 'json',
      api_key: fakes.mojeek.key,
    });
  });

  it('gets safe search, the language preference and the date filter honoured by Mojeek', async () => {
    const q = uniq('mojeek honoured');
    fakes.mojeek.setResults(q, [
      { url: 'https://m.example/en-1', title: 'en 1' },
      { url: 'https://m.example/adult', title: 'adult', adult: true },
      { url: 'https://m.example/fr-1', title: 'fr 1', language: 'fr' },
      { url: 'https://m.example/en-2', title: 'en 2' },
    ]);
    const urls = async (params: Record<string, string>) =>
      (await web({ q, engine: 'provider_02', ...params })).body.results.map((r) => r.url);
    expect(await urls({ safe: 'off' })).toEqual([
      'https://m.example/en-1',
      'https://m.example/adult',
      'https://m.example/fr-1',
      'https://m.example/en-2',
    ]);
    expect(await urls({})).toEqual(['https://m.example/en-1', 'https://m.example/fr-1', 'https://m.example/en-2']);
    expect((await urls({ lang: 'fr' }))[0]).toBe('https://m.example/fr-1');
    // Each fixture is dated a day older than the one before it: `since=day` keeps the first only.
    expect(await urls({ date: 'd', safe: 'off' })).toEqual(['https://m.example/en-1']);
  });

  it('maps page and safe search to Marginalia (nsfw=0 only when safe search is off)', async () => {
    const q = uniq('marginalia mapping');
    await web({ q, engine: 'provider_03', page: '2', safe: 'no', lang: 'de' });
    await web({ q, engine: 'provider_03', page: '2' });
    const [off, on] = fakes.marginalia.requests;
    expect(Object.fromEntries(off!.query)).toEqual({ query: q, count: '10', page: '2', nsfw: '0' });
    expect(Object.fromEntries(on!.query)).toEqual({ query: q, count: '10', page: '2', nsfw: '1' });
    expect(off!.headers['api-key']).toBe(fakes.marginalia.key);
  });

  it('maps page and language to Staan (result offset, one of its lower-case markets, none for other languages)', async () => {
    const q = uniq('staan mapping');
    await web({ q, engine: 'provider_04', page: '4', lang: 'en' });
    await web({ q, engine: 'provider_04', lang: 'fr' });
    await web({ q, engine: 'provider_04', lang: 'es', safe: 'off', date: 'y' });
    await web({ q, engine: 'provider_04', lang: 'en-GB' });
    const [a, b, c, d] = fakes.staan.requests;
    expect(Object.fromEntries(a!.query)).toEqual({ q, offset: '30', market: 'en-us' });
    expect(Object.fromEntries(b!.query)).toEqual({ q, offset: '0', market: 'fr-fr' });
    expect(Object.fromEntries(c!.query)).toEqual({ q, offset: '0' });
    expect(Object.fromEntries(d!.query)).toEqual({ q, offset: '0', market: 'en-gb' });
    expect(a!.headers.authorization).toBe(`Bearer ${fakes.staan.key}`);
  });

  it('asks Staan only for pages 1-4 and queries of at most 400 characters', async () => {
    const page5 = await web({ q: uniq('staan page five'), page: '5' });
    expect(page5.status).toBe(200);
    expect(page5.body.engine).toEqual(['provider_01', 'provider_02', 'provider_03', 'provider_04']);
    const long = await web({ q: `${uniq('x')} ${'y'.repeat(400)}`, engine: 'provider_04 provider_02' });
    expect(long.status).toBe(200);
    expect(fakes.staan.requests).toHaveLength(0);
    expect(fakes.mojeek.requests).toHaveLength(2);
  });

  it('clamps the page into 1..50', async () => {
    const q = uniq('clamp');
    const high = await web({ q, page: '999', engine: 'provider_03' });
    expect(high.body.page).toBe(50);
    expect(fakes.marginalia.requests[0]!.query.get('page')).toBe('50');
    const low = await web({ q, page: '-3', engine: 'provider_03' });
    expect(low.body.page).toBe(1);
  });
});

describe('GET /api/v1/web/ merged results', () => {
  it('merges the four engines by reciprocal rank, with sources, labels and every field', async () => {
    const q = 'rust borow';
    fakes.brave.setAltered(q, 'rust borrow');
    fakes.brave.setResults('rust borrow', [
      {
        url: 'https://doc.rust-lang.org/book/',
        title: 'The Rust Book',
        description: 'Learn <strong>Rust</strong> ownership',
        age: 'March 3, 2024',
        favicon: 'https://imgs.example/favicon.png',
        sitelinks: [{ title: 'Ownership', url: 'https://doc.rust-lang.org/book/ch04.html' }],
      },
      { url: 'https://brave-only.example/', title: 'Brave only', description: 'rust' },
    ]);
    fakes.mojeek.setResults(q, [
      {
        url: 'https://mojeek-only.example/page',
        title: 'Mojeek only',
        description: 'The rust &amp; borow <i>rust</i> trust',
        date: Date.UTC(2024, 1, 9, 12) / 1000,
      },
      { url: 'https://doc.rust-lang.org/book/', title: 'Mojeek copy', description: 'ignored' },
    ]);
    fakes.marginalia.setResults(q, [{ url: 'https://doc.rust-lang.org/book/', title: 'Marginalia copy' }]);
    fakes.staan.setResults(q, [
      {
        url: 'http://WWW.Staan-Only.example:8080/x',
        title: 'Staan only',
        description: 'Rust',
        displayUrl: 'staan-only.example › x',
        favicon: 'https://staan.example/fav.ico',
      },
      { url: 'https://mojeek-only.example/page', title: 'Staan copy' },
    ]);

    const res = await web({ q });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      query: q,
      tab: 'web',
      page: 1,
      engine: ['provider_01', 'provider_02', 'provider_03', 'provider_04'],
      correction: 'rust borrow',
      unresponsive: [],
      results: [
        {
          title: 'The Rust Book',
          url: 'https://doc.rust-lang.org/book/',
          description: 'Learn <strong>Rust</strong> ownership',
          display_url: 'doc.rust-lang.org › book',
          favicon_url: 'https://imgs.example/favicon.png',
          age: 'March 3, 2024',
          source: 'all',
          source_label: 'Mojeek · Marginalia',
          sitelinks: [{ type: 'button_result', title: 'Ownership', url: 'https://doc.rust-lang.org/book/ch04.html' }],
        },
        {
          title: 'Mojeek only',
          url: 'https://mojeek-only.example/page',
          description: 'The <strong>rust</strong> &amp; <strong>borow</strong> <i><strong>rust</strong></i> trust',
          display_url: 'mojeek-only.example',
          favicon_url: '',
          // Mojeek's date (Unix seconds), as Sift writes a date.
          age: 'February 09, 2024',
          source: 'both',
          source_label: 'Mojeek · Staan',
          sitelinks: [],
        },
        {
          title: 'Staan only',
          url: 'http://WWW.Staan-Only.example:8080/x',
          description: '<strong>Rust</strong>',
          display_url: 'staan-only.example › x',
          favicon_url: 'https://staan.example/fav.ico',
          // Staan's published_date.
          age: 'March 14, 2025',
          source: 'provider_04',
          source_label: 'Staan',
          sitelinks: [],
        },
        {
          title: 'Brave only',
          url: 'https://brave-only.example/',
          description: '<strong>rust</strong>',
          display_url: 'brave-only.example',
          favicon_url: 'https://imgs.search.brave.com/profile/brave-only.example',
          age: 'March 3, 2024',
          source: 'provider_01',
          source_label: '',
          sitelinks: [],
        },
      ],
    });
  });

  it('answers only the engines asked for, in canonical order, and no correction without provider_01', async () => {
    const q = uniq('scope');
    fakes.brave.setAltered(q, 'something else');
    const res = await web({ q, engine: 'provider_03 provider_02' });
    expect(res.body.engine).toEqual(['provider_02', 'provider_03']);
    expect(res.body.correction).toBe('');
    expect(fakes.brave.requests).toHaveLength(0);
    expect(fakes.staan.requests).toHaveLength(0);
    const sources = new Set(res.body.results.map((r) => r.source));
    expect([...sources].sort()).toEqual(['both', 'provider_02', 'provider_03']);
    expect(Mojeek_Marginalia_label(res.body.results)).toBe(true);
  });

  it('gives display_url as host[:port] for Mojeek and Marginalia results', async () => {
    const q = uniq('hosts');
    fakes.marginalia.setResults(q, [
      { url: 'https://www.Example.org:8443/a?b=c', title: 'x' },
      { url: 'not a url', title: 'y' },
    ]);
    const res = await web({ q, engine: 'provider_03' });
    expect(res.body.results.map((r) => r.display_url)).toEqual(['www.Example.org:8443', '']);
  });

  it('answers 200 with empty results when nothing matched', async () => {
    const q = uniq('nothing');
    for (const f of [fakes.brave, fakes.mojeek, fakes.marginalia, fakes.staan]) f.setResults(q, []);
    const res = await web({ q });
    expect(res).toEqual({
      status: 200,
      body: {
        query: q,
        tab: 'web',
        page: 1,
        engine: ['provider_01', 'provider_02', 'provider_03', 'provider_04'],
        correction: '',
        results: [],
        unresponsive: [],
      },
    });
  });
});

function Mojeek_Marginalia_label(results: Record<string, unknown>[]): boolean {
  return results.every(
    (r) =>
      (r.source === 'both' && r.source_label === 'Mojeek · Marginalia') ||
      (r.source === 'provider_02' && r.source_label === 'Mojeek') ||
      (r.source === 'provider_03' && r.source_label === 'Marginalia'),
  );
}

describe('GET /api/v1/web/ upstream failures', () => {
  it('lists failed engines in unresponsive, keeps the others, and records them down', async () => {
    fakes.mojeek.failWith('daily_limit');
    fakes.brave.failWith('rate_limited');
    fakes.marginalia.failWith('rate_limited');
    const q = uniq('partial');
    const res = await web({ q });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([
      { engine: 'provider_01', reason: 'rate_limited' },
      { engine: 'provider_02', reason: 'error' },
      { engine: 'provider_03', reason: 'error' },
    ]);
    expect(res.body.results.length).toBeGreaterThan(0);
    expect(res.body.results.every((r) => r.source === 'provider_04')).toBe(true);
    const mojeek = await healthRow('provider_02');
    expect(mojeek?.ok).toBe(false);
    expect(mojeek?.last_error).toContain('Daily Limit Reached');
    expect(mojeek?.last_error).not.toContain(fakes.mojeek.key);
    expect((await healthRow('provider_04'))?.ok).toBe(true);
  });

  it('treats garbage, wrong statuses and resets as failures of that engine only', async () => {
    fakes.brave.setMode({ kind: 'garbage' });
    fakes.mojeek.setMode({ kind: 'status', status: 500, body: 'oops' });
    fakes.staan.setMode({ kind: 'reset' });
    const res = await web({ q: uniq('faults') });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([
      { engine: 'provider_01', reason: 'error' },
      { engine: 'provider_02', reason: 'error' },
      { engine: 'provider_04', reason: 'unavailable' },
    ]);
    expect(res.body.results.every((r) => r.source === 'provider_03')).toBe(true);
  });

  it('answers 502 with every engine when all of them failed, and counts no usage', async () => {
    const before = await usage();
    fakes.brave.failWith('invalid_key');
    fakes.mojeek.failWith('invalid_key');
    fakes.marginalia.failWith('invalid_key');
    fakes.staan.failWith('invalid_key');
    const res = await web({ q: uniq('all down') });
    expect(res).toEqual({
      status: 502,
      body: {
        detail: 'All search providers failed.',
        unresponsive: [
          { engine: 'provider_01', reason: 'error' },
          { engine: 'provider_02', reason: 'error' },
          { engine: 'provider_03', reason: 'error' },
          { engine: 'provider_04', reason: 'error' },
        ],
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(fakes.mojeek.key);
    expect(await usage()).toBe(before);
  });

  it('never waits for a hung engine past its timeout, and returns the others', async () => {
    fakes.staan.setMode({ kind: 'hang' });
    fakes.marginalia.setMode({ kind: 'stall' });
    // The hung engines never answer: only their timeout can end the request (how soon: the bench's `hung` section).
    const res = await web({ q: uniq('hung') });
    expect(res.status).toBe(200);
    expect(res.body.unresponsive).toEqual([
      { engine: 'provider_03', reason: 'timeout' },
      { engine: 'provider_04', reason: 'timeout' },
    ]);
    const sources = new Set(res.body.results.map((r) => r.source));
    expect(sources.has('provider_01') && sources.has('provider_02')).toBe(true);
    expect((await healthRow('provider_04'))?.ok).toBe(false);
  });
});

describe('GET /api/v1/web/ cache', () => {
  it('serves a repeated search from the cache without calling the engines again', async () => {
    const q = uniq('cached');
    const first = await web({ q });
    const calls =
      fakes.brave.requests.length +
      fakes.mojeek.requests.length +
      fakes.marginalia.requests.length +
      fakes.staan.requests.length;
    expect(calls).toBe(4);
    const second = await web({ q });
    expect(second.body).toEqual(first.body);
    expect(
      fakes.brave.requests.length +
        fakes.mojeek.requests.length +
        fakes.marginalia.requests.length +
        fakes.staan.requests.length,
    ).toBe(4);
    // a different page, language or safe setting is another upstream request
    await web({ q, page: '2' });
    await web({ q, safe: 'off', engine: 'provider_03' });
    expect(fakes.brave.requests).toHaveLength(2);
    expect(fakes.marginalia.requests).toHaveLength(3);
    // Mojeek takes safe search (another request); Staan has none (same upstream request, still cached)
    await web({ q, safe: 'off', engine: 'provider_02,provider_04' });
    expect(fakes.mojeek.requests).toHaveLength(3);
    expect(fakes.staan.requests).toHaveLength(2);
  });

  it('never caches a failure', async () => {
    const q = uniq('retry');
    fakes.mojeek.failWith('daily_limit');
    const failed = await web({ q, engine: 'provider_02' });
    expect(failed.status).toBe(502);
    fakes.mojeek.failWith(null);
    const ok = await web({ q, engine: 'provider_02' });
    expect(ok.status).toBe(200);
    expect(ok.body.results.length).toBe(10);
    expect(fakes.mojeek.requests).toHaveLength(2);
  });

  it('shares one upstream call between concurrent identical searches', async () => {
    fakes.setLatency(100);
    try {
      const q = uniq('concurrent');
      const answers = await Promise.all([1, 2, 3, 4, 5].map(() => web({ q, engine: 'provider_02' })));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(fakes.mojeek.requests).toHaveLength(1);
    } finally {
      fakes.setLatency(0);
    }
  });
});

describe('GET /api/v1/web/ usage', () => {
  it('counts one search per engine in the requested scope, on success only', async () => {
    await t.app.lifecycle.flush();
    await db.pool.query('DELETE FROM usage_monthly');
    await web({ q: uniq('usage all') });
    expect(await usage()).toBe(4);
    await web({ q: uniq('usage two'), engine: 'provider_01,provider_04' });
    expect(await usage()).toBe(6);
    // Staan beyond page 4 is not asked, but was requested: still counted
    await web({ q: uniq('usage page'), engine: 'provider_04,provider_02', page: '9' });
    expect(await usage()).toBe(8);
    await web({ q: uniq('usage none'), engine: ',' });
    expect(await usage()).toBe(8);
    await web({ q: '' });
    expect(await usage()).toBe(8);
  });
});

describe('GET /api/v1/web/ with engines not configured', () => {
  let partial: TestApp;
  beforeAll(async () => {
    partial = await buildTestApp(db, {
      ...UNTHROTTLED,
      BRAVE_BASE_URL: fakes.brave.baseUrl,
      BRAVE_API_KEY: fakes.brave.key,
      MOJEEK_BASE_URL: fakes.mojeek.baseUrl,
      MARGINALIA_BASE_URL: fakes.marginalia.baseUrl,
      STAAN_BASE_URL: fakes.staan.baseUrl,
    });
  });
  afterAll(async () => partial?.close());

  it('answers 503 naming the missing keys when no engine in scope is configured', async () => {
    const q = uniq('unconfigured');
    const res = await web({ q, engine: 'provider_02,provider_03' }, partial);
    expect(res).toEqual({
      status: 503,
      body: {
        detail:
          'No web search engine in the requested scope is configured on this instance: ' +
          'provider_02 (Mojeek) needs MOJEEK_API_KEY; provider_03 (Marginalia) needs MARGINALIA_API_KEY.',
      },
    });
    expect(fakes.mojeek.requests).toHaveLength(0);
    expect(fakes.marginalia.requests).toHaveLength(0);
  });

  it('asks only the configured engines of the scope', async () => {
    const res = await web({ q: uniq('only brave') }, partial);
    expect(res.status).toBe(200);
    expect(res.body.results.length).toBe(10);
    expect(res.body.results.every((r) => r.source === 'provider_01')).toBe(true);
    expect(fakes.brave.requests).toHaveLength(1);
    expect(fakes.mojeek.requests.length + fakes.marginalia.requests.length + fakes.staan.requests.length).toBe(0);
  });
});

describe('GET /api/v1/web/ on an instance that lacks engines', () => {
  let fresh: TestApp;
  let staanOnly: TestApp;
  beforeAll(async () => {
    fresh = await buildTestApp(db, { ...UNTHROTTLED });
    staanOnly = await buildTestApp(db, {
      ...UNTHROTTLED,
      STAAN_BASE_URL: fakes.staan.baseUrl,
      STAAN_API_KEY: fakes.staan.key,
      MOJEEK_API_KEY: 'set-but-disabled',
      DISABLED_PROVIDERS: 'provider_02',
    });
  });
  afterAll(async () => {
    await fresh?.close();
    await staanOnly?.close();
  });

  it('answers 503 on a fresh instance with no keys, naming every engine and its variable, and counts nothing', async () => {
    await fresh.app.lifecycle.flush();
    const before = await monthlySearches(db.pool, userId);
    const res = await web({ q: uniq('fresh') }, fresh);
    expect(res.status).toBe(503);
    expect(res.body.detail).toBe(
      'No web search engine in the requested scope is configured on this instance: ' +
        'provider_01 (Brave Search) needs BRAVE_API_KEY; provider_02 (Mojeek) needs MOJEEK_API_KEY; ' +
        'provider_03 (Marginalia) needs MARGINALIA_API_KEY; provider_04 (Staan) needs STAAN_API_KEY.',
    );
    await fresh.app.lifecycle.flush();
    expect(await monthlySearches(db.pool, userId)).toBe(before);
  });

  it('answers 503 for engine=provider_01 without BRAVE_API_KEY, and says when an engine is disabled', async () => {
    expect((await web({ q: uniq('brave only'), engine: 'provider_01' }, staanOnly)).body.detail).toBe(
      'No web search engine in the requested scope is configured on this instance: provider_01 (Brave Search) needs BRAVE_API_KEY.',
    );
    expect((await web({ q: uniq('disabled'), engine: 'provider_02' }, staanOnly)).body.detail).toBe(
      'No web search engine in the requested scope is configured on this instance: provider_02 (Mojeek) is disabled by DISABLED_PROVIDERS.',
    );
  });

  it('keeps a configured engine that sits out by its own rules as configured: Staan past page 4 is a 200 with no results', async () => {
    const res = await web({ q: uniq('deep page'), engine: 'provider_04', page: '5' }, staanOnly);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expect(res.body.unresponsive).toEqual([]);
    expect(fakes.staan.requests).toHaveLength(0);
  });
});
