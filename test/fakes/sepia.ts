import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { intParam, slugify } from './web-results.js';

/*
 * Fake Sepia Search (upstreams.md section 6), the PeerTube global index:
 * GET /api/v1/search/videos?search=&start=&count=&sort=&nsfw=&languageOneOf[]=&startDate=
 * Keyless. Filters like the real index: nsfw=false hides NSFW videos,
 * languageOneOf[] keeps those languages, startDate keeps videos published at
 * or after it. Errors are PeerTube's RFC 7807 problem JSON (a missing
 * `search` is a 400). Fault modes come from startFakeServer (setMode).
 */

export type SepiaVideo = Record<string, unknown>;

export interface SepiaFakeOptions {
  latencyMs?: number;
}

export type SepiaFailure = 'server_error' | 'rate_limited';

export interface SepiaFake extends FakeServer {
  /** Value for SEPIA_BASE_URL (…/api/v1). */
  baseUrl: string;
  /** Pins the videos for `q` (before filtering and paging), as raw PeerTube video objects. */
  setVideos(q: string, videos: SepiaVideo[]): void;
  failWith(failure: SepiaFailure | null): void;
}

const DEFAULT_VIDEOS = 35;
const HOUR_MS = 3600_000;

/** The default video `n` (1-based) for a query: published n*36 hours ago, every 5th NSFW, odd ones English. */
export function sepiaVideo(q: string, n: number, now = Date.now()): SepiaVideo {
  const slug = slugify(q);
  const host = n % 2 === 0 ? 'tube.example.org' : 'framatube.org';
  const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return {
    id: 9000 + n,
    uuid,
    shortUUID: `${slug}${n}`,
    name: `${q} video ${n}`,
    description: `A video about ${q}.`,
    duration: 60 * n + 7,
    views: 100 * n,
    likes: n,
    nsfw: n % 5 === 0,
    isLive: false,
    publishedAt: new Date(now - n * 36 * HOUR_MS).toISOString(),
    originallyPublishedAt: null,
    url: `https://${host}/w/${slug}-${n}`,
    thumbnailUrl: `https://${host}/lazy-static/thumbnails/${slug}-${n}.jpg`,
    previewUrl: `https://${host}/lazy-static/previews/${slug}-${n}.jpg`,
    embedUrl: `https://${host}/videos/embed/${uuid}`,
    language: n % 2 === 1 ? { id: 'en', label: 'English' } : { id: 'fr', label: 'French' },
    tags: [slug],
    account: { name: 'alice', displayName: 'Alice', host, url: `https://${host}/accounts/alice` },
    channel: {
      name: 'alice_channel',
      displayName: "Alice's videos",
      host,
      url: `https://${host}/video-channels/alice_channel`,
    },
  };
}

function problem(status: number, title: string, detail: string): FakeReply {
  return {
    status,
    headers: { 'content-type': 'application/problem+json; charset=utf-8' },
    body: {
      type: `https://docs.joinpeertube.org/api-rest-reference.html#section/Errors/${status}`,
      title,
      detail,
      status,
    },
  };
}

export async function startSepiaFake(options: SepiaFakeOptions = {}): Promise<SepiaFake> {
  const pinned = new Map<string, SepiaVideo[]>();
  let forced: SepiaFailure | null = null;

  const search = (req: FakeRequest): FakeReply => {
    if (forced === 'server_error') return problem(500, 'Internal Server Error', 'The index is unavailable.');
    if (forced === 'rate_limited') return problem(429, 'Too Many Requests', 'You have been rate limited.');
    const q = req.query.get('search');
    if (!q) return problem(400, 'Bad Request', 'search is required');
    const start = intParam(req.query.get('start'), 0);
    const count = intParam(req.query.get('count'), 15);
    if (start < 0 || count < 0 || count > 100) return problem(400, 'Bad Request', 'Invalid start or count');
    const now = Date.now();
    let all = pinned.get(q) ?? Array.from({ length: DEFAULT_VIDEOS }, (_, i) => sepiaVideo(q, i + 1, now));
    if (req.query.get('nsfw') === 'false') all = all.filter((v) => v.nsfw !== true);
    const languages = req.query.getAll('languageOneOf[]');
    if (languages.length > 0) {
      all = all.filter((v) => languages.includes(String((v.language as { id?: unknown } | undefined)?.id ?? '')));
    }
    const startDate = req.query.get('startDate');
    if (startDate) {
      const since = Date.parse(startDate);
      if (Number.isNaN(since)) return problem(400, 'Bad Request', 'startDate should be a valid ISO 8601 date');
      all = all.filter((v) => Date.parse(String(v.publishedAt)) >= since);
    }
    return { body: { total: all.length, data: all.slice(start, start + count) } };
  };

  const fake = await startFakeServer({ 'GET /api/v1/search/videos': search }, { latencyMs: options.latencyMs });
  return Object.assign(fake, {
    baseUrl: `${fake.url}/api/v1`,
    setVideos: (q: string, videos: SepiaVideo[]) => {
      pinned.set(q, videos);
    },
    failWith: (failure: SepiaFailure | null) => {
      forced = failure;
    },
  });
}
