import { type FakeReply, type FakeRequest, type FakeServer, startFakeServer } from './fake-server.js';
import { type Fixtures, type FixtureResult, hostOf, intParam, ResultBook, slugify } from './web-results.js';

/*
 * Fake Brave Search API (upstreams.md section 1), served under /res/v1 like the
 * real one: web, images, news, videos and suggest. Checks the
 * X-Subscription-Token header (a wrong token gives Brave's 422
 * SUBSCRIPTION_TOKEN_INVALID, the token "limited" a 429 RATE_LIMITED with
 * Brave's rate-limit headers), the paging parameters (web count 1-20,
 * news/videos count 1-50, suggest count 1-20, offset 0-9, images count 1-200
 * and safesearch off|strict) and the fixed lists of search_lang and country
 * (Brave's reference; its own copy, not the adapter's), like the real API:
 * anything else is Brave's 422
 * VALIDATION "Unable to validate request parameter(s)" with the pydantic
 * error naming the parameter in meta.errors[].loc, as in the bodies quoted in
 * openclaw/openclaw #37260 and #18795. The case of `country` is not checked
 * (the reference lists upper case; Brave's answers echo lower case). News
 * results carry no `source` key, only meta_url and profile.name, and video
 * results video.publisher and video.creator, as Brave's samples do. Images,
 * news and videos can also be pinned as raw Brave result objects
 * (`setMediaResults`), served as given.
 */

export interface BraveFakeOptions {
  latencyMs?: number;
  gzip?: boolean;
  /** Accepted token for web/images/news/videos (default "brave-test-key"). */
  key?: string;
  /** Accepted token for suggest (default "brave-suggest-test-key"). */
  suggestKey?: string;
  fixtures?: Fixtures;
  /**
   * Answer as a key on this plan does: every answer reports the plan's windows in Brave's
   * X-RateLimit-* headers, and a call within a second of `perSecond` others is Brave's 429.
   */
  plan?: { perSecond: number; perMonth: number };
}

export type MediaEndpoint = 'images' | 'news' | 'videos';

export type BraveFailure = 'invalid_key' | 'rate_limited' | 'quota' | 'validation';

export interface BraveFake extends FakeServer {
  /** Value for BRAVE_BASE_URL (…/res/v1). */
  baseUrl: string;
  key: string;
  suggestKey: string;
  /** Pins the ranked web results for `q` (all pages). */
  setResults(q: string, items: FixtureResult[]): void;
  /** Makes web search report `altered` as the corrected query for `q`. */
  setAltered(q: string, altered: string | null): void;
  /** Pins the suggestions for `q`. */
  setSuggestions(q: string, list: string[]): void;
  /** Every request fails with this Brave error until called with null. */
  failWith(failure: BraveFailure | null): void;
  /** Pins the raw result objects of images, news or videos for `q` (all pages). */
  setMediaResults(endpoint: MediaEndpoint, q: string, results: Record<string, unknown>[]): void;
  /** Narrows the search_lang values accepted (as when Brave drops one from its list), or back to Brave's with null. */
  acceptSearchLangs(langs: Iterable<string> | null): void;
  /** The 429s answered because the plan's per-second window was full (options.plan). */
  readonly overLimit: number;
  /** Requests received on one endpoint (`web`, `images`, `news`, `videos`, `suggest`). */
  requestsTo(endpoint: 'web' | 'images' | 'news' | 'videos' | 'suggest'): FakeRequest[];
}

let errorCounter = 0;

/*
 * Brave's own lists (the "codes" pages of its API reference, as Brave's MCP server enumerates
 * them), kept here apart from the adapter's copy so that the fake checks the adapter.
 */
const BRAVE_SEARCH_LANGS: ReadonlySet<string> = new Set(
  (
    'ar eu bn bg ca zh-hans zh-hant hr cs da nl en en-gb et fi fr gl de gu he hi hu is it jp kn ko lv lt ms ml mr ' +
    'nb pl pt-br pt-pt pa ro ru sr sk sl es sv ta te th tr uk vi'
  ).split(' '),
);
const BRAVE_COUNTRIES: ReadonlySet<string> = new Set(
  'AR AU AT BE BR CA CL DK FI FR DE HK IN ID IT JP KR MY MX NL NZ NO CN PL PT PH RU SA ZA ES SE CH TW TR GB US'.split(
    ' ',
  ),
);

/** pydantic's message for a value outside a list: "Input should be 'a', 'b' or 'c'". */
function enumMessage(values: Iterable<string>): string {
  const quoted = [...values].map((v) => `'${v}'`);
  return `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

const SEARCH_LANG_EXPECTED = enumMessage(BRAVE_SEARCH_LANGS);
const COUNTRY_EXPECTED = enumMessage(['ALL', ...BRAVE_COUNTRIES]);

/** Brave's 422 VALIDATION answer carrying one pydantic error. */
export function validation(error: Record<string, unknown>): FakeReply {
  return braveError(422, 'VALIDATION', 'Unable to validate request parameter(s)', { errors: [error] });
}

/** Brave's 422 for a value outside a fixed list. */
function enumError(param: string, input: string, expected: string): FakeReply {
  return validation({
    type: 'enum',
    loc: ['query', param],
    msg: `Input should be ${expected}`,
    input,
    ctx: { expected },
  });
}

/** The 422 Brave answers for a search_lang or country outside its lists, or null. */
function localeError(req: FakeRequest, langs: ReadonlySet<string>): FakeReply | null {
  const lang = req.query.get('search_lang');
  if (lang !== null && !langs.has(lang)) {
    return enumError('search_lang', lang, langs === BRAVE_SEARCH_LANGS ? SEARCH_LANG_EXPECTED : enumMessage(langs));
  }
  const country = req.query.get('country');
  if (country !== null && country.toUpperCase() !== 'ALL' && !BRAVE_COUNTRIES.has(country.toUpperCase())) {
    return enumError('country', country, COUNTRY_EXPECTED);
  }
  return null;
}

export function braveError(
  status: number,
  code: string,
  detail: string,
  meta: Record<string, unknown> = {},
): FakeReply {
  errorCounter++;
  return {
    status,
    body: {
      type: 'ErrorResponse',
      error: { id: `00000000-0000-4000-8000-${String(errorCounter).padStart(12, '0')}`, status, code, detail, meta },
      time: Math.floor(Date.now() / 1000),
    },
  };
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': '1, 15000',
  'X-RateLimit-Policy': '1;w=1, 15000;w=2592000',
  'X-RateLimit-Remaining': '0, 1000',
  'X-RateLimit-Reset': '1, 1419704',
};

function failureReply(failure: BraveFailure): FakeReply {
  switch (failure) {
    case 'invalid_key':
      return braveError(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.', {
        component: 'authentication',
      });
    case 'rate_limited':
      return {
        ...braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.', { component: 'rate_limiter' }),
        headers: RATE_HEADERS,
      };
    case 'quota':
      return {
        ...braveError(429, 'QUOTA_LIMITED', 'Request quota limit exceeded for plan.', { component: 'rate_limiter' }),
        headers: RATE_HEADERS,
      };
    case 'validation':
      return validation({ type: 'missing', loc: ['query', 'q'], msg: 'Field required', input: null });
  }
}

/** A publisher's name for a news result, as Brave's profile.name gives it ("Example News" for news.example.org). */
export function publisherOf(url: string): string {
  const host = hostOf(url).replace(/^www\./, '');
  const label = host.split('.').find((part) => part !== 'news') ?? host;
  return `${label.charAt(0).toUpperCase()}${label.slice(1)} News`;
}

function metaUrl(url: string) {
  let scheme = 'https';
  let host = '';
  let path = '';
  try {
    const u = new URL(url);
    scheme = u.protocol.replace(':', '');
    host = u.host;
    const parts = u.pathname.split('/').filter(Boolean);
    path = parts.length ? `› ${parts.join(' › ')}` : '';
  } catch {
    /* keep blanks */
  }
  return {
    scheme,
    netloc: host,
    hostname: host.replace(/:\d+$/, ''),
    favicon: `https://imgs.search.brave.com/favicon/${host}`,
    path,
  };
}

function webResult(r: FixtureResult) {
  const meta = metaUrl(r.url);
  return {
    type: 'search_result',
    subtype: 'generic',
    title: r.title ?? '',
    url: r.url,
    description: r.description ?? '',
    age: r.age ?? 'March 3, 2024',
    page_age: r.publishedDate ?? '2024-03-03T10:12:00',
    language: 'en',
    family_friendly: true,
    is_source_local: false,
    is_source_both: false,
    profile: {
      name: meta.hostname,
      long_name: meta.hostname,
      url: r.url,
      img: r.favicon ?? `https://imgs.search.brave.com/profile/${meta.hostname}`,
    },
    meta_url: meta,
    thumbnail: { src: `https://imgs.search.brave.com/thumb/${slugify(r.url)}`, original: `${r.url}/thumb.png` },
    ...(r.sitelinks
      ? { deep_results: { buttons: r.sitelinks.map((s) => ({ type: 'button_result', title: s.title, url: s.url })) } }
      : {}),
    extra_snippets: [],
  };
}

export async function startBraveFake(options: BraveFakeOptions = {}): Promise<BraveFake> {
  const key = options.key ?? 'brave-test-key';
  const suggestKey = options.suggestKey ?? 'brave-suggest-test-key';
  const book = new ResultBook('brave', options.fixtures);
  const altered = new Map<string, string | null>();
  const suggestions = new Map<string, string[]>();
  let forced: BraveFailure | null = null;
  let searchLangs: ReadonlySet<string> = BRAVE_SEARCH_LANGS;
  const media = new Map<string, Record<string, unknown>[]>();
  const pinnedMedia = (endpoint: MediaEndpoint, q: string) => media.get(`${endpoint} ${q}`);

  /** Brave's 422 for a value outside a parameter's bounds (pydantic's less/greater-than error). */
  function rangeError(param: string, input: string, min: number, max: number): FakeReply {
    const low = Number(input) < min;
    return validation({
      type: low ? 'greater_than_equal' : 'less_than_equal',
      loc: ['query', param],
      msg: low ? `Input should be greater than or equal to ${min}` : `Input should be less than or equal to ${max}`,
      input,
      ctx: low ? { ge: min } : { le: max },
    });
  }

  /** A number parameter within min..max, or Brave's 422 naming it. */
  function bounded(req: FakeRequest, param: string, fallback: number, min: number, max: number): number | FakeReply {
    const raw = req.query.get(param);
    const value = intParam(raw, fallback);
    return value < min || value > max ? rangeError(param, raw ?? '', min, max) : value;
  }

  /** count (1..max) and offset (0..9) of web, news and videos, or the 422 Brave answers. */
  function paging(req: FakeRequest, max: number): { count: number; offset: number } | FakeReply {
    const count = bounded(req, 'count', 20, 1, max);
    if (typeof count !== 'number') return count;
    const offset = bounded(req, 'offset', 0, 0, 9);
    if (typeof offset !== 'number') return offset;
    return { count, offset };
  }

  /** q, count (1..max) and offset of a web, news or videos request that passed the checks, or Brave's error. */
  function pagedSearch(req: FakeRequest, max: number): { q: string; count: number; offset: number } | FakeReply {
    const error = check(req, key);
    if (error) return error;
    const paged = paging(req, max);
    if ('body' in paged) return paged;
    return { q: req.query.get('q')!, ...paged };
  }

  function check(req: FakeRequest, expected: string): FakeReply | null {
    if (forced) return failureReply(forced);
    const token = req.headers['x-subscription-token'];
    if (typeof token !== 'string' || token === '') {
      return validation({
        type: 'missing',
        loc: ['header', 'x-subscription-token'],
        msg: 'Field required',
        input: null,
      });
    }
    if (token === 'limited') return failureReply('rate_limited');
    if (token !== expected) return failureReply('invalid_key');
    const q = req.query.get('q');
    if (!q) return failureReply('validation');
    if (q.length > 400) {
      return validation({
        type: 'string_too_long',
        loc: ['query', 'q'],
        msg: 'String should have at most 400 characters',
        input: q,
        ctx: { max_length: 400 },
      });
    }
    return localeError(req, searchLangs);
  }

  function queryBlock(q: string) {
    const alt = altered.get(q) ?? null;
    return {
      original: q,
      altered: alt,
      spellcheck_off: false,
      show_strict_warning: false,
      more_results_available: true,
      country: 'us',
    };
  }

  const web = (req: FakeRequest): FakeReply => {
    const asked = pagedSearch(req, 20);
    if ('body' in asked) return asked;
    const { q, count, offset } = asked;
    const searched = altered.get(q) ?? q;
    const results = book.slice(searched === q ? q : searched, offset * count, count).map(webResult);
    return {
      body: {
        type: 'search',
        query: queryBlock(q),
        mixed: { type: 'mixed', main: [{ type: 'web', index: 0, all: true }], top: [], side: [] },
        web: { type: 'search', family_friendly: req.query.get('safesearch') !== 'off', results },
        news: { type: 'news', results: [] },
        videos: { type: 'videos', results: [] },
      },
    };
  };

  const images = (req: FakeRequest): FakeReply => {
    const error = check(req, key);
    if (error) return error;
    const q = req.query.get('q')!;
    const count = bounded(req, 'count', 50, 1, 200);
    if (typeof count !== 'number') return count;
    const safesearch = req.query.get('safesearch');
    if (safesearch !== null && safesearch !== 'off' && safesearch !== 'strict') {
      return enumError('safesearch', safesearch, "'off' or 'strict'");
    }
    const raw = pinnedMedia('images', q);
    if (raw)
      return {
        body: {
          type: 'images',
          query: queryBlock(q),
          results: raw.slice(0, count),
          extra: { might_be_offensive: false },
        },
      };
    const results = book.slice(q, 0, count).map((r) => {
      const host = hostOf(r.url);
      return {
        type: 'image_result',
        title: r.title ?? '',
        url: r.url,
        source: host,
        page_fetched: '2025-09-15T10:30:00Z',
        thumbnail: { src: `https://imgs.search.brave.com/thumb/${slugify(r.url)}`, width: 500, height: 333 },
        properties: {
          url: `${r.url}/image.jpg`,
          placeholder: 'https://imgs.search.brave.com/placeholder',
          width: 1920,
          height: 1280,
        },
        meta_url: metaUrl(r.url),
        confidence: 'high',
      };
    });
    return { body: { type: 'images', query: queryBlock(q), results, extra: { might_be_offensive: false } } };
  };

  const news = (req: FakeRequest): FakeReply => {
    const asked = pagedSearch(req, 50);
    if ('body' in asked) return asked;
    const { q, count, offset } = asked;
    const raw = pinnedMedia('news', q);
    if (raw)
      return { body: { type: 'news', query: queryBlock(q), results: raw.slice(offset * count, (offset + 1) * count) } };
    const results = book.slice(q, offset * count, count).map((r) => ({
      type: 'news_result',
      title: r.title ?? '',
      url: r.url,
      description: r.description ?? '',
      age: r.age ?? '2 hours ago',
      page_age: r.publishedDate ?? '2025-11-20T08:00:00',
      breaking: false,
      thumbnail: { src: `https://imgs.search.brave.com/thumb/${slugify(r.url)}` },
      meta_url: metaUrl(r.url),
      profile: {
        name: publisherOf(r.url),
        url: r.url,
        long_name: hostOf(r.url),
        img: `https://imgs.search.brave.com/profile/${hostOf(r.url)}`,
      },
      extra_snippets: [],
    }));
    return { body: { type: 'news', query: queryBlock(q), results } };
  };

  const videos = (req: FakeRequest): FakeReply => {
    const asked = pagedSearch(req, 50);
    if ('body' in asked) return asked;
    const { q, count, offset } = asked;
    const raw = pinnedMedia('videos', q);
    if (raw) {
      const results = raw.slice(offset * count, (offset + 1) * count);
      return { body: { type: 'videos', query: queryBlock(q), results, extra: { might_be_offensive: false } } };
    }
    const results = book.slice(q, offset * count, count).map((r, i) => ({
      type: 'video_result',
      title: r.title ?? '',
      url: r.url,
      description: r.description ?? '',
      age: r.age ?? '1 year ago',
      page_age: r.publishedDate ?? '2024-06-01T12:00:00',
      video: {
        duration: `${10 + i}:${String((i * 7) % 60).padStart(2, '0')}`,
        views: 1000 + i,
        creator: 'Fake Creator',
        publisher: 'YouTube',
        thumbnail: { src: `https://imgs.search.brave.com/video/${slugify(r.url)}` },
      },
      thumbnail: { src: `https://imgs.search.brave.com/thumb/${slugify(r.url)}`, original: `${r.url}/hq.jpg` },
      meta_url: metaUrl(r.url),
    }));
    return { body: { type: 'videos', query: queryBlock(q), results, extra: { might_be_offensive: false } } };
  };

  const suggest = (req: FakeRequest): FakeReply => {
    const error = check(req, suggestKey);
    if (error) return error;
    const q = req.query.get('q')!;
    const counted = bounded(req, 'count', 5, 1, 20);
    if (typeof counted !== 'number') return counted;
    const list = suggestions.get(q) ?? [
      q,
      `${q} meaning`,
      `${q} definition`,
      `${q} examples`,
      `${q} history`,
      `${q} near me`,
      `${q} wiki`,
      `${q} news`,
      `${q} images`,
      `${q} video`,
    ];
    return {
      body: { type: 'suggest', query: { original: q }, results: list.slice(0, counted).map((s) => ({ query: s })) },
    };
  };

  // The plan's per-second window, sliding (the strictest reading), and its month's count.
  const plan = options.plan;
  let accepted: number[] = [];
  let monthUsed = 0;
  let overLimit = 0;
  const planned =
    (handler: (req: FakeRequest) => FakeReply) =>
    (req: FakeRequest): FakeReply => {
      if (!plan) return handler(req);
      // Judged on arrival, as Brave's servers judge it: not after this fake's latency timer, which a
      // busy test process fires late by a varying amount, so requests may reach this handler out of
      // their arrival order. The window holds the calls that arrived in the second before this one.
      const now = req.at;
      accepted = accepted.filter((t) => t > now - 2000);
      const inWindow = accepted.filter((t) => t > now - 1000 && t <= now);
      const resetSeconds =
        inWindow.length > 0 ? Math.max(1, Math.ceil((Math.min(...inWindow) + 1000 - now) / 1000)) : 1;
      const headers = (remaining: number) => ({
        'X-RateLimit-Limit': `${plan.perSecond}, ${plan.perMonth}`,
        'X-RateLimit-Policy': `${plan.perSecond};w=1, ${plan.perMonth};w=2592000`,
        'X-RateLimit-Remaining': `${remaining}, ${Math.max(0, plan.perMonth - monthUsed)}`,
        'X-RateLimit-Reset': `${resetSeconds}, 1419704`,
      });
      if (inWindow.length >= plan.perSecond) {
        overLimit++;
        return {
          ...braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.', { component: 'rate_limiter' }),
          headers: headers(0),
        };
      }
      const reply = handler(req);
      const counted = (reply.status ?? 200) === 200;
      if (counted) {
        accepted.push(now);
        monthUsed++;
      }
      return {
        ...reply,
        headers: { ...reply.headers, ...headers(plan.perSecond - inWindow.length - (counted ? 1 : 0)) },
      };
    };

  const fake = await startFakeServer(
    {
      'GET /res/v1/web/search': planned(web),
      'GET /res/v1/images/search': planned(images),
      'GET /res/v1/news/search': planned(news),
      'GET /res/v1/videos/search': planned(videos),
      'GET /res/v1/suggest/search': planned(suggest),
    },
    { latencyMs: options.latencyMs, gzip: options.gzip },
  );

  const braveFake = Object.assign(fake, {
    baseUrl: `${fake.url}/res/v1`,
    key,
    suggestKey,
    setResults: (q: string, items: FixtureResult[]) => book.set(q, items),
    setAltered: (q: string, alt: string | null) => {
      altered.set(q, alt);
    },
    setSuggestions: (q: string, list: string[]) => {
      suggestions.set(q, list);
    },
    setMediaResults: (endpoint: MediaEndpoint, q: string, results: Record<string, unknown>[]) => {
      media.set(`${endpoint} ${q}`, results);
    },
    failWith: (failure: BraveFailure | null) => {
      forced = failure;
    },
    acceptSearchLangs: (langs: Iterable<string> | null) => {
      searchLangs = langs === null ? BRAVE_SEARCH_LANGS : new Set(langs);
    },
    requestsTo: (endpoint: 'web' | 'images' | 'news' | 'videos' | 'suggest') =>
      fake.requests.filter((r) => r.path === `/res/v1/${endpoint}/search`),
  });
  return Object.defineProperty(braveFake, 'overLimit', { get: () => overLimit, enumerable: true }) as BraveFake;
}
