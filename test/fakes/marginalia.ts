import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { type Fixtures, type FixtureResult, intParam, ResultBook } from './web-results.js';

/*
 * Fake Marginalia Search API v2 (upstreams.md section 3): GET /search?query=&count=&page=&nsfw=
 * with header API-Key. Errors as the real one: a missing key or query gives
 * 400 with an empty body, an unknown key 401, the key "limited" (or
 * failWith('rate_limited')) 503 with an empty body, failWith('timeout') 504.
 */

export interface MarginaliaFakeOptions {
  latencyMs?: number;
  gzip?: boolean;
  /** Accepted API-Key (default "public", the shared free key). */
  key?: string;
  fixtures?: Fixtures;
}

export type MarginaliaFailure = 'invalid_key' | 'rate_limited' | 'timeout';

export interface MarginaliaFake extends FakeServer {
  /** Value for MARGINALIA_BASE_URL. */
  baseUrl: string;
  key: string;
  setResults(q: string, items: FixtureResult[]): void;
  failWith(failure: MarginaliaFailure | null): void;
}

const empty = (status: number): FakeReply => ({ status, headers: { 'content-type': 'text/plain' }, body: '' });

export async function startMarginaliaFake(options: MarginaliaFakeOptions = {}): Promise<MarginaliaFake> {
  const key = options.key ?? 'public';
  const book = new ResultBook('marginalia', options.fixtures);
  let forced: MarginaliaFailure | null = null;

  const search = (req: FakeRequest): FakeReply => {
    if (forced === 'invalid_key') return empty(401);
    if (forced === 'rate_limited') return empty(503);
    if (forced === 'timeout') return empty(504);
    const apiKey = req.headers['api-key'];
    if (typeof apiKey !== 'string' || apiKey === '') return empty(400);
    if (apiKey === 'limited') return empty(503);
    if (apiKey !== key) return empty(401);
    const q = req.query.get('query') ?? '';
    if (!q) return empty(400);
    const count = Math.min(100, Math.max(1, intParam(req.query.get('count'), 20)));
    const page = Math.max(1, intParam(req.query.get('page'), 1));
    const results = book.slice(q, (page - 1) * count, count).map((r, i) => ({
      url: r.url,
      title: r.title ?? '',
      description: r.description ?? '',
      quality: -2.41 - i / 10,
      format: 'html',
      resultsFromDomain: 1,
      details: [[{ keyword: q.split(/\s+/)[0] ?? q, count: 3, flagsUnstableAPI: ['TITLE'] }]],
    }));
    return { body: { license: 'CC-BY-NC-SA 4.0', query: q, results } };
  };

  const fake = await startFakeServer({ 'GET /search': search }, { latencyMs: options.latencyMs, gzip: options.gzip });
  return Object.assign(fake, {
    baseUrl: fake.url,
    key,
    setResults: (q: string, items: FixtureResult[]) => book.set(q, items),
    failWith: (failure: MarginaliaFailure | null) => {
      forced = failure;
    },
  });
}
