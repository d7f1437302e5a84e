import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { intParam, slugify } from './web-results.js';

/*
 * Fake World News API (upstreams.md section 7): GET /search-news?text=&number=
 * &offset=&sort=&sort-direction=&language=&earliest-publish-date=, the key in
 * the `x-api-key` header (or the `api-key` query parameter). Errors as the
 * API's clients see them: a wrong or missing key 401, the key "quota" 402
 * (points used up), the key "limited" 429, a missing `text` 400, each with a
 * {"status":"failure","code":…,"message":…} body. `language` and
 * `earliest-publish-date` ("YYYY-MM-DD HH:MM:SS", UTC) filter like the real
 * API. Quota headers on every answer. Fault modes come from startFakeServer.
 */

export type WorldNewsArticle = Record<string, unknown>;

export interface WorldNewsFakeOptions {
  latencyMs?: number;
  /** Accepted key (default "worldnews-test-key"). */
  key?: string;
}

export type WorldNewsFailure = 'invalid_key' | 'quota' | 'rate_limited';

export interface WorldNewsFake extends FakeServer {
  /** Value for WORLDNEWS_BASE_URL. */
  baseUrl: string;
  key: string;
  /** Pins the articles for `q` (before filtering and paging), as raw World News objects. */
  setNews(q: string, news: WorldNewsArticle[]): void;
  failWith(failure: WorldNewsFailure | null): void;
}

const DEFAULT_ARTICLES = 30;
const HOUR_MS = 3600_000;

/** "YYYY-MM-DD HH:MM:SS" in UTC, World News' publish_date form. */
export function worldNewsTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** The default article `n` (1-based) for a query: published n*10 hours ago, odd ones English. */
export function worldNewsArticle(q: string, n: number, now = Date.now()): WorldNewsArticle {
  const slug = slugify(q);
  const host = n % 2 === 0 ? 'news.example.com' : 'www.daily.example.org';
  return {
    id: 224767000 + n,
    title: `${q}: story ${n}`,
    text: `Full text of story ${n} about ${q}.`,
    summary: `Summary of story ${n} about ${q}.`,
    url: `https://${host}/${slug}/${n}`,
    image: `https://${host}/img/${slug}-${n}.jpg`,
    video: null,
    publish_date: worldNewsTime(now - n * 10 * HOUR_MS),
    author: 'Jane Doe',
    authors: ['Jane Doe'],
    language: n % 2 === 1 ? 'en' : 'de',
    source_country: 'us',
    sentiment: 0.1,
    category: 'environment',
  };
}

const QUOTA_HEADERS = { 'X-API-Quota-Request': '1.1', 'X-API-Quota-Used': '12.3', 'X-API-Quota-Left': '37.7' };

function failure(status: number, message: string): FakeReply {
  return { status, headers: QUOTA_HEADERS, body: { status: 'failure', code: status, message } };
}

function failureReply(kind: WorldNewsFailure): FakeReply {
  switch (kind) {
    case 'invalid_key':
      return failure(401, 'Invalid API key.');
    case 'quota':
      return failure(402, 'Your daily points limit of 50 has been reached.');
    case 'rate_limited':
      return failure(429, 'Too many requests.');
  }
}

export async function startWorldNewsFake(options: WorldNewsFakeOptions = {}): Promise<WorldNewsFake> {
  const key = options.key ?? 'worldnews-test-key';
  const pinned = new Map<string, WorldNewsArticle[]>();
  let forced: WorldNewsFailure | null = null;

  const search = (req: FakeRequest): FakeReply => {
    if (forced) return failureReply(forced);
    const header = req.headers['x-api-key'];
    const given = typeof header === 'string' && header !== '' ? header : req.query.get('api-key');
    if (given === 'quota') return failureReply('quota');
    if (given === 'limited') return failureReply('rate_limited');
    if (given !== key) return failureReply('invalid_key');
    const q = req.query.get('text');
    if (!q) return failure(400, 'The parameter text is required.');
    const number = intParam(req.query.get('number'), 10);
    const offset = intParam(req.query.get('offset'), 0);
    if (number < 1 || number > 100 || offset < 0 || offset > 10000) {
      return failure(400, 'number must be between 1 and 100 and offset between 0 and 10000.');
    }
    const now = Date.now();
    let all = pinned.get(q) ?? Array.from({ length: DEFAULT_ARTICLES }, (_, i) => worldNewsArticle(q, i + 1, now));
    const language = req.query.get('language');
    if (language) all = all.filter((a) => a.language === language);
    const earliest = req.query.get('earliest-publish-date');
    if (earliest) {
      if (!/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?$/.test(earliest)) {
        return failure(400, 'earliest-publish-date must be in the format yyyy-MM-dd HH:mm:ss.');
      }
      const since = Date.parse(`${earliest.replace(' ', 'T')}Z`);
      all = all.filter((a) => Date.parse(`${String(a.publish_date).replace(' ', 'T')}Z`) >= since);
    }
    return {
      headers: QUOTA_HEADERS,
      body: { offset, number, available: all.length, news: all.slice(offset, offset + number) },
    };
  };

  const fake = await startFakeServer({ 'GET /search-news': search }, { latencyMs: options.latencyMs });
  return Object.assign(fake, {
    baseUrl: fake.url,
    key,
    setNews: (q: string, news: WorldNewsArticle[]) => {
      pinned.set(q, news);
    },
    failWith: (kind: WorldNewsFailure | null) => {
      forced = kind;
    },
  });
}
