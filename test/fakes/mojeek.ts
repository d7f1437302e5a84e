import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { type Fixtures, type FixtureResult, intParam, ResultBook } from './web-results.js';

/*
 * Fake Mojeek Search API (upstreams.md section 2): GET /search?q=&s=&t|results=&fmt=json&api_key=.
 * Like the real API it reports errors in the body of an HTTP 200:
 * `response.status` is "OK" or an "ERROR: …" string (a wrong key gives
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
    const per = intParam(req.query.get('t') ?? req.query.get('results'), 10);
    const items = book.slice(q, start - 1, per);
    const now = Math.floor(Date.now() / 1000);
    const results = items.map((r, i) => ({
      url: r.url,
      title: r.title ?? '',
      desc: r.description ?? '',
      size: `${12 + i}kb`,
      date: now - 86400 * (i + 1),
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
