import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { type Fixtures, type FixtureResult, hostOf, intParam, ResultBook } from './web-results.js';

/*
 * Fake Staan API (upstreams.md section 4), served under /v2 like the real one:
 * GET /v2/search/web?q=&offset=&market= with Authorization: Bearer <key>.
 * Errors as Staan reports them: 401 {"code":"INVALID_CREDENTIALS","message"},
 * 429 {"code":"RATE_LIMITED","message"} (the key "limited"), and the
 * framework shape {"statusCode":400,"error":"Bad Request","message":[…]} for
 * an offset that is not a multiple of 10 up to 30, a market outside Staan's
 * twelve lower-case markets (checked as sent: `en-US` is refused, as clients
 * document "market must be one of the following values") or a query over 400
 * characters. Without a market Staan answers from its default market, fr-fr.
 */

export interface StaanFakeOptions {
  latencyMs?: number;
  gzip?: boolean;
  /** Accepted bearer token (default "staan-test-key"). */
  key?: string;
  fixtures?: Fixtures;
}

export type StaanFailure = 'invalid_key' | 'rate_limited';

export interface StaanFake extends FakeServer {
  /** Value for STAAN_BASE_URL (…/v2). */
  baseUrl: string;
  key: string;
  setResults(q: string, items: FixtureResult[]): void;
  failWith(failure: StaanFailure | null): void;
}

/** Staan's markets, as clients list them (its own copy, not the adapter's: the fake checks the adapter). */
export const STAAN_MARKETS = [
  'fr-fr',
  'de-de',
  'en-us',
  'en-gb',
  'en-fr',
  'en-ca',
  'en-au',
  'en-in',
  'en-ie',
  'en-nz',
  'en-za',
  'en-sg',
];

const invalidCredentials = (): FakeReply => ({
  status: 401,
  body: { code: 'INVALID_CREDENTIALS', message: 'Invalid or missing API key.' },
});
const rateLimited = (): FakeReply => ({
  status: 429,
  body: { code: 'RATE_LIMITED', message: 'Too many requests, please slow down.' },
});
const badRequest = (message: string): FakeReply => ({
  status: 400,
  body: { statusCode: 400, error: 'Bad Request', message: [message] },
});

export async function startStaanFake(options: StaanFakeOptions = {}): Promise<StaanFake> {
  const key = options.key ?? 'staan-test-key';
  const book = new ResultBook('staan', options.fixtures);
  let forced: StaanFailure | null = null;

  const search = (req: FakeRequest): FakeReply => {
    if (forced === 'invalid_key') return invalidCredentials();
    if (forced === 'rate_limited') return rateLimited();
    const auth = req.headers.authorization;
    if (typeof auth !== 'string' || !auth.startsWith('Bearer ')) return invalidCredentials();
    const token = auth.slice('Bearer '.length);
    if (token === 'limited') return rateLimited();
    if (token !== key) return invalidCredentials();
    const q = req.query.get('q') ?? '';
    if (!q) return badRequest('q should not be empty');
    if ([...q].length > 400) return badRequest('q must be shorter than or equal to 400 characters');
    const offset = intParam(req.query.get('offset'), 0);
    if (offset < 0 || offset > 30 || offset % 10 !== 0)
      return badRequest('offset must be a multiple of 10 not greater than 30');
    const market = req.query.get('market');
    if (market !== null && !STAAN_MARKETS.includes(market)) {
      return badRequest(`market must be one of the following values: ${STAAN_MARKETS.join(', ')}`);
    }
    const results = book.slice(q, offset, 10).map((r) => {
      const hostname = hostOf(r.url);
      const path = (() => {
        try {
          return new URL(r.url).pathname.split('/').filter(Boolean).join(' › ');
        } catch {
          return '';
        }
      })();
      return {
        title: r.title ?? '',
        url: r.url,
        snippet: r.description ?? '',
        hostname,
        display_url: r.displayUrl ?? `${hostname.replace(/^www\./, '')}${path ? ` › ${path}` : ''}`,
        ...(r.favicon ? { favicon_url: r.favicon } : {}),
        published_date: r.publishedDate ?? '2025-03-14',
        extra_snippets: [{ chunk: r.description ?? '', score: 0.82 }],
      };
    });
    return { body: { web: { results } } };
  };

  const fake = await startFakeServer(
    { 'GET /v2/search/web': search },
    { latencyMs: options.latencyMs, gzip: options.gzip },
  );
  return Object.assign(fake, {
    baseUrl: `${fake.url}/v2`,
    key,
    setResults: (q: string, items: FixtureResult[]) => book.set(q, items),
    failWith: (failure: StaanFailure | null) => {
      forced = failure;
    },
  });
}
