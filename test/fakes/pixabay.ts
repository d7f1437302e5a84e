import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { intParam, slugify } from './web-results.js';

/*
 * Fake Pixabay API (upstreams.md section 5): GET /api/?key=&q=&page=&per_page=
 * &image_type=&safesearch=&lang=. Like the real API it answers errors with an
 * HTTP error status and a plain-text body: a wrong or missing key gives 400
 * "[ERROR 400] Invalid or missing API key …", the key "limited" a 429 with
 * Pixabay's X-RateLimit headers, a page past the reachable hits (at most
 * 500) 400 "[ERROR 400] "page" is out of valid range.". Safe search drops
 * the hits a test marks `adult` (by default every 7th of 500). Fault modes come from
 * startFakeServer (setMode).
 */

/** One hit in Pixabay's shape (served as given; `adult` is the fake's own marker, never sent). */
export type PixabayHit = Record<string, unknown> & { adult?: boolean };

export interface PixabayFakeOptions {
  latencyMs?: number;
  /** Accepted key (default "pixabay-test-key"). */
  key?: string;
}

export type PixabayFailure = 'invalid_key' | 'rate_limited' | 'server_error';

export interface PixabayFake extends FakeServer {
  /** Value for PIXABAY_BASE_URL (…/api). */
  baseUrl: string;
  key: string;
  /** Pins the hits for `q` (all pages), as raw Pixabay hit objects. */
  setHits(q: string, hits: PixabayHit[]): void;
  failWith(failure: PixabayFailure | null): void;
}

export const PIXABAY_TOTAL_HITS = 500;
const DEFAULT_HITS = 500;

/** The default hit `n` (1-based) for a query. */
export function pixabayHit(q: string, n: number): PixabayHit {
  const id = 100000 + n;
  const slug = slugify(q);
  return {
    id,
    pageURL: `https://pixabay.com/photos/${slug}-${id}/`,
    type: 'photo',
    tags: `${q}, photo ${n}`,
    previewURL: `https://cdn.pixabay.com/photo/2024/01/01/${slug}-${id}_150.jpg`,
    previewWidth: 150,
    previewHeight: 100,
    webformatURL: `https://pixabay.com/get/${slug}-${id}_640.jpg`,
    webformatWidth: 640,
    webformatHeight: 427,
    largeImageURL: `https://pixabay.com/get/${slug}-${id}_1280.jpg`,
    imageWidth: 4000,
    imageHeight: 2667,
    imageSize: 3100000,
    views: 1000 + n,
    downloads: 500 + n,
    collections: 3,
    likes: 20,
    comments: 2,
    user_id: 48777,
    user: 'FakePhotographer',
    userImageURL: 'https://cdn.pixabay.com/user/2013/11/05/02-10-23-764_250x250.jpg',
    adult: n % 7 === 0,
  };
}

function textError(status: number, message: string, headers: Record<string, string> = {}): FakeReply {
  return { status, headers, body: message };
}

const RATE_HEADERS = { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '42' };

function failureReply(failure: PixabayFailure): FakeReply {
  switch (failure) {
    case 'invalid_key':
      return textError(400, '[ERROR 400] Invalid or missing API key (https://pixabay.com/api/docs/).');
    case 'rate_limited':
      return textError(429, '[ERROR 429] API rate limit exceeded.', RATE_HEADERS);
    case 'server_error':
      return textError(500, '[ERROR 500] Internal server error.');
  }
}

export async function startPixabayFake(options: PixabayFakeOptions = {}): Promise<PixabayFake> {
  const key = options.key ?? 'pixabay-test-key';
  const pinned = new Map<string, PixabayHit[]>();
  let forced: PixabayFailure | null = null;

  const search = (req: FakeRequest): FakeReply => {
    if (forced) return failureReply(forced);
    const given = req.query.get('key');
    if (given === 'limited') return failureReply('rate_limited');
    if (given !== key) return failureReply('invalid_key');
    const q = req.query.get('q') ?? '';
    if ([...q].length > 100) return textError(400, '[ERROR 400] "q" exceeds the maximum length of 100 characters.');
    const perPage = intParam(req.query.get('per_page'), 20);
    const page = intParam(req.query.get('page'), 1);
    if (perPage < 3 || perPage > 200) return textError(400, '[ERROR 400] "per_page" is out of valid range.');
    const safe = req.query.get('safesearch') === 'true';
    let all = pinned.get(q) ?? Array.from({ length: DEFAULT_HITS }, (_, i) => pixabayHit(q, i + 1));
    if (safe) all = all.filter((h) => !h.adult);
    // Past the reachable hits (at most 500) Pixabay refuses the page rather than answering an empty list.
    if (page < 1 || (page > 1 && (page - 1) * perPage >= Math.min(all.length, PIXABAY_TOTAL_HITS))) {
      return textError(400, '[ERROR 400] "page" is out of valid range.');
    }
    const hits = all.slice((page - 1) * perPage, page * perPage).map(({ adult: _adult, ...hit }) => hit);
    return {
      headers: { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '99', 'X-RateLimit-Reset': '60' },
      body: { total: all.length * 9, totalHits: Math.min(all.length, PIXABAY_TOTAL_HITS), hits },
    };
  };

  const fake = await startFakeServer({ 'GET /api/': search }, { latencyMs: options.latencyMs });
  return Object.assign(fake, {
    baseUrl: `${fake.url}/api`,
    key,
    setHits: (q: string, hits: PixabayHit[]) => {
      pinned.set(q, hits);
    },
    failWith: (failure: PixabayFailure | null) => {
      forced = failure;
    },
  });
}
