import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { type Fixtures, type FixtureResult, intParam, ResultBook } from './web-results.js';

/*
 * Fake Mojeek Search API (Mojeek's request parameters page):
 * GET /search?q=&s=&t=&safe=&lb=&lbb=&since=&fmt=json&api_key=. It honours
 * what Mojeek documents: s (1-based first result), t (results per page,
 * default 10), safe (1 hides the results a test marks `adult`; 0 or absent
 * shows them), lb (results in that language first, the language a test gives
 * a result, default EN) and since (day | month | year | YYYYMMDD: results
 * older than that are dropped, each result dated a day older than the one
 * before it). Like Mojeek it ignores parameters it does not know (`results`,
 * `language`). Like the real API it reports errors in the body of an HTTP
 * 200: `response.status` is "OK" or an "ERROR: …" string (a wrong key gives
 * "ERROR: Invalid API key", the key "limited" "ERROR: Daily Limit Reached").
 */

export interface MojeekFakeOptions {
  latencyMs?: number;
  gzip?: boolean;
  /** Accepted api_key (default "mojeek-test-key"). */
  key?: string;
  fixtures?: Fixtures;
}

export type MojeekFailure = 'invalid_key' | 'daily_limit';

export interface MojeekFake extends FakeServer {
  /** Value for MOJEEK_BASE_URL. */
  baseUrl: string;
  key: string;
  setResults(q: string, items: FixtureResult[]): void;
  /** Every request answers this in-body error until called with null. */
  failWith(failure: MojeekFailure | null): void;
}

export function mojeekError(status: string): FakeReply {
  return { body: { response: { status } } };
}

const DAY = 86400;

/** The earliest date (Unix seconds) a `since` value admits: 0 without one. */
function sinceSeconds(since: string | null, now: number): number {
  if (!since) return 0;
  if (since === 'day') return now - DAY;
  if (since === 'month') return now - 31 * DAY;
  if (since === 'year') return now - 365 * DAY;
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(since);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 1000 : 0;
}

export async function startMojeekFake(options: MojeekFakeOptions = {}): Promise<MojeekFake> {
  const key = options.key ?? 'mojeek-test-key';
  const book = new ResultBook('mojeek', options.fixtures);
  let forced: MojeekFailure | null = null;

  const search = (req: FakeRequest): FakeReply => {
    if (forced === 'invalid_key') return mojeekError('ERROR: Invalid API key');
    if (forced === 'daily_limit') return mojeekError('ERROR: Daily Limit Reached');
    const apiKey = req.query.get('api_key');
    if (apiKey === 'limited') return mojeekError('ERROR: Daily Limit Reached');
    if (apiKey !== key) return mojeekError('ERROR: Invalid API key');
    const q = req.query.get('q') ?? '';
    if (!q) return mojeekError('ERROR: No query');
    const start = Math.max(1, intParam(req.query.get('s'), 1));
    const per = intParam(req.query.get('t'), 10);
    const now = Math.floor(Date.now() / 1000);
    const since = req.query.get('since');
    const lb = (req.query.get('lb') ?? '').toUpperCase();
    let page: { r: FixtureResult; date: number }[];
    if (!since && !book.isPinned(q)) {
      // The default list has no adult or non-English result: only the asked slice is made (the benchmark's path).
      page = book.slice(q, start - 1, per).map((r, i) => ({ r, date: now - 86400 * (start + i) }));
    } else {
      const dated = book.slice(q, 0, 1000).map((r, i) => ({ r, date: r.date ?? now - 86400 * (i + 1) }));
      const earliest = sinceSeconds(since, now);
      let kept = dated.filter(({ r, date }) => date >= earliest && !(req.query.get('safe') === '1' && r.adult));
      if (lb) {
        const lang = (r: FixtureResult) => (r.language ?? 'en').toUpperCase();
        kept = [...kept.filter(({ r }) => lang(r) === lb), ...kept.filter(({ r }) => lang(r) !== lb)];
      }
      page = kept.slice(start - 1, start - 1 + per);
    }
    const results = page.map(({ r, date }, i) => ({
      url: r.url,
      title: r.title ?? '',
      desc: r.description ?? '',
      size: `${12 + i}kb`,
      date,
      cdate: now - 3600 * (i + 1),
    }));
    const body = {
      response: {
        status: 'OK',
        head: {
          query: q,
          nword: q.split(/\s+/).filter(Boolean).length,
          timer: 0.12,
          start,
          return: results.length,
          exact: false,
          results: 112094,
          rankm: 169,
          dups: 0,
        },
        results,
      },
    };
    if (req.query.get('fmt') !== 'json') {
      return { headers: { 'content-type': 'application/xml' }, body: '<?xml version="1.0"?><results/>' };
    }
    return { body };
  };

  const fake = await startFakeServer({ 'GET /search': search }, { latencyMs: options.latencyMs, gzip: options.gzip });
  return Object.assign(fake, {
    baseUrl: fake.url,
    key,
    setResults: (q: string, items: FixtureResult[]) => book.set(q, items),
    failWith: (failure: MojeekFailure | null) => {
      forced = failure;
    },
  });
}
