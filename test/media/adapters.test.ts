import { embedUrlOf } from '../../src/providers/embed.js';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import type { MediaQuery } from '../../src/contracts/search.js';
import { braveImagesCall, parseBraveImages } from '../../src/providers/brave/images.js';
import { braveNewsCall, parseBraveNews } from '../../src/providers/brave/news.js';
import { braveVideosCall, parseBraveVideos } from '../../src/providers/brave/videos.js';
import { parsePixabay, pixabayImagesCall } from '../../src/providers/pixabay/images.js';
import { formatDuration, formatPublished, parseSepia, sepiaVideosCall } from '../../src/providers/sepia/videos.js';
import { bareHostname, parseWorldNews, relativeAge, worldNewsCall } from '../../src/providers/worldnews/news.js';
import { normalizedQuery, params } from '../helpers/provider-calls.js';

/*
 * The media adapters on the example payloads of upstreams.md (field names
 * real, values as documented), and their request builders per upstream.
 */

const config = parseConfig({
  BRAVE_API_KEY: 'brave-key',
  PIXABAY_API_KEY: 'pixabay-key',
  WORLDNEWS_API_KEY: 'worldnews-key',
});
const query = (over: Partial<MediaQuery> = {}) => normalizedQuery('northern lights', over);
const NOW = Date.parse('2025-11-21T12:00:00Z');

const BRAVE_IMAGES = {
  type: 'images',
  query: { original: 'northern lights', altered: null, spellcheck_off: false, show_strict_warning: false },
  results: [
    {
      type: 'image_result',
      title: 'Aurora over Tromsø',
      url: 'https://example.com/aurora-page',
      source: 'example.com',
      page_fetched: '2025-09-15T10:30:00Z',
      thumbnail: { src: 'https://imgs.search.brave.com/aurora-thumb', width: 500, height: 333 },
      properties: {
        url: 'https://example.com/img/aurora.jpg',
        placeholder: 'https://imgs.search.brave.com/placeholder',
        width: 1920,
        height: 1280,
      },
      meta_url: {
        scheme: 'https',
        netloc: 'example.com',
        hostname: 'example.com',
        favicon: 'https://imgs.search.brave.com/fav',
        path: '› aurora-page',
      },
      confidence: 'high',
    },
  ],
  extra: { might_be_offensive: false },
};

describe('Brave images adapter', () => {
  it('maps title, the page url, the source host and the proxied thumbnail', () => {
    expect(parseBraveImages(BRAVE_IMAGES, 1)).toEqual([
      {
        title: 'Aurora over Tromsø',
        url: 'https://example.com/aurora-page',
        source: 'example.com',
        thumbnail: 'https://imgs.search.brave.com/aurora-thumb',
      },
    ]);
  });

  it('asks for page*10 images (at most 200) and cuts the page out locally', () => {
    const call = braveImagesCall(query({ page: 3, lang: 'fr', safe: false, date: 'w' }), config)!;
    expect(call.request.url.startsWith('https://api.search.brave.com/res/v1/images/search?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      q: 'northern lights',
      count: '30',
      safesearch: 'off',
      search_lang: 'fr',
      country: 'FR',
    });
    expect(call.request.headers).toMatchObject({ 'X-Subscription-Token': 'brave-key' });
    expect(params(braveImagesCall(query({ page: 20 }), config)!.request.url)).toMatchObject({
      count: '200',
      safesearch: 'strict',
    });
    const many = { results: Array.from({ length: 30 }, (_, i) => ({ url: `https://x.example/${i}`, title: `${i}` })) };
    expect(call.parse(many).map((r) => r.title)).toEqual(['20', '21', '22', '23', '24', '25', '26', '27', '28', '29']);
    expect(parseBraveImages(many, 4)).toEqual([]);
  });

  it('does not ask Brave past page 20 (its 200-image ceiling)', () => {
    expect(braveImagesCall(query({ page: 21 }), config)).toBeNull();
  });

  it('parses tolerantly: missing fields are "", the host falls back to meta_url, items without a url are dropped', () => {
    expect(parseBraveImages({}, 1)).toEqual([]);
    expect(
      parseBraveImages(
        { results: [null, { title: 'no url' }, { url: 'https://b.example/p', meta_url: { hostname: 'b.example' } }] },
        1,
      ),
    ).toEqual([{ title: '', url: 'https://b.example/p', source: 'b.example', thumbnail: '' }]);
    expect(() => parseBraveImages('not an object', 1)).toThrow();
  });
});

const BRAVE_NEWS = {
  type: 'news',
  query: { original: 'climate summit' },
  results: [
    {
      type: 'news_result',
      title: 'Leaders gather for climate summit',
      url: 'https://news.example.org/2025/climate',
      description: 'Delegates from ...',
      age: '2 hours ago',
      page_age: '2025-11-20T08:00:00',
      breaking: false,
      thumbnail: { src: 'https://imgs.search.brave.com/climate' },
      meta_url: {
        scheme: 'https',
        netloc: 'news.example.org',
        hostname: 'news.example.org',
        favicon: 'https://imgs.search.brave.com/fav',
        path: '› 2025 › climate',
      },
      extra_snippets: [],
    },
  ],
};

describe('Brave news adapter', () => {
  it("maps Brave's raw news objects, the publisher from meta_url's site when there is no profile", () => {
    expect(parseBraveNews(BRAVE_NEWS)).toEqual([
      {
        title: 'Leaders gather for climate summit',
        url: 'https://news.example.org/2025/climate',
        description: 'Delegates from ...',
        age: '2 hours ago',
        published: '2025-11-20T08:00:00Z',
        source: 'news.example.org',
        hostname: 'news.example.org',
        thumbnail: 'https://imgs.search.brave.com/climate',
      },
    ]);
  });

  it("takes the publisher's name from profile.name when Brave sends one (a `source` string first)", () => {
    const withProfile = { results: [{ ...BRAVE_NEWS.results[0], profile: { name: 'Example News', url: 'u' } }] };
    expect(parseBraveNews(withProfile)[0]!.source).toBe('Example News');
    const withSource = { results: [{ ...BRAVE_NEWS.results[0], source: 'Example Wire', profile: { name: 'x' } }] };
    expect(parseBraveNews(withSource)[0]!.source).toBe('Example Wire');
    const netlocOnly = { results: [{ url: 'https://n.example/a', meta_url: { netloc: 'n.example' } }] };
    expect(parseBraveNews(netlocOnly)[0]).toMatchObject({ source: 'n.example', hostname: 'n.example' });
  });

  it('asks like web search: a 0-based page index, safe search, language and freshness', () => {
    const call = braveNewsCall(query({ page: 4, lang: 'de', date: 'd' }), config)!;
    expect(call.request.url.startsWith('https://api.search.brave.com/res/v1/news/search?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      q: 'northern lights',
      count: '10',
      offset: '3',
      safesearch: 'strict',
      search_lang: 'de',
      country: 'DE',
      freshness: 'pd',
    });
    expect(params(braveNewsCall(query({ page: 10 }), config)!.request.url).offset).toBe('9');
    expect(braveNewsCall(query({ page: 11 }), config)).toBeNull();
  });
});

const BRAVE_VIDEOS = {
  type: 'videos',
  query: { original: 'sourdough tutorial' },
  results: [
    {
      type: 'video_result',
      title: 'Sourdough for beginners',
      url: 'https://www.youtube.com/watch?v=abc123',
      description: 'Step by step ...',
      age: '1 year ago',
      page_age: '2024-06-01T12:00:00',
      video: {
        duration: '12:34',
        views: 120345,
        creator: 'Bake Lab',
        publisher: 'YouTube',
        thumbnail: { src: 'https://imgs.search.brave.com/video-thumb' },
      },
      thumbnail: {
        src: 'https://imgs.search.brave.com/sourdough',
        original: 'https://i.ytimg.com/vi/abc123/hqdefault.jpg',
      },
      meta_url: {
        scheme: 'https',
        netloc: 'youtube.com',
        hostname: 'www.youtube.com',
        favicon: 'https://imgs.search.brave.com/fav',
        path: '› watch',
      },
    },
  ],
  extra: { might_be_offensive: false },
};

describe('Brave videos adapter', () => {
  it("maps title, url, Brave's age and duration as given, the publisher, the hostname and the thumbnail", () => {
    expect(parseBraveVideos(BRAVE_VIDEOS)).toEqual([
      {
        title: 'Sourdough for beginners',
        url: 'https://www.youtube.com/watch?v=abc123',
        age: '1 year ago',
        published: '2024-06-01T12:00:00Z',
        source: 'YouTube',
        duration: '12:34',
        hostname: 'www.youtube.com',
        thumbnail: 'https://imgs.search.brave.com/sourdough',
        embed_url: 'https://www.youtube-nocookie.com/embed/abc123',
      },
    ]);
    expect(parseBraveVideos({ results: [{ url: 'https://v.example/' }] })).toEqual([
      {
        title: '',
        url: 'https://v.example/',
        age: '',
        published: '',
        source: '',
        duration: '',
        hostname: '',
        thumbnail: '',
        embed_url: '',
      },
    ]);
    const creatorOnly = { results: [{ url: 'https://v.example/', video: { creator: 'Bake Lab' } }] };
    expect(parseBraveVideos(creatorOnly)[0]!.source).toBe('Bake Lab');
  });

  it('asks like web search and sits out past page 10', () => {
    const call = braveVideosCall(query({ page: 2, safe: false, date: 'm' }), config)!;
    expect(call.request.url.startsWith('https://api.search.brave.com/res/v1/videos/search?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      q: 'northern lights',
      count: '10',
      offset: '1',
      safesearch: 'off',
      freshness: 'pm',
    });
    expect(braveVideosCall(query({ page: 50 }), config)).toBeNull();
  });
});

const PIXABAY = {
  total: 4692,
  totalHits: 500,
  hits: [
    {
      id: 195893,
      pageURL: 'https://pixabay.com/photos/blossom-bloom-flower-195893/',
      type: 'photo',
      tags: 'blossom, bloom, flower',
      previewURL: 'https://cdn.pixabay.com/photo/2013/10/15/09/12/flower-195893_150.jpg',
      previewWidth: 150,
      previewHeight: 84,
      webformatURL: 'https://pixabay.com/get/35bbf209e13e39d2_640.jpg',
      webformatWidth: 640,
      webformatHeight: 360,
      largeImageURL: 'https://pixabay.com/get/ed6a99fd0a76647_1280.jpg',
      imageWidth: 4000,
      imageHeight: 2250,
      imageSize: 4731420,
      views: 7671,
      downloads: 6439,
      collections: 1,
      likes: 5,
      comments: 2,
      user_id: 48777,
      user: 'Josch13',
      userImageURL: 'https://cdn.pixabay.com/user/2013/11/05/02-10-23-764_250x250.jpg',
    },
  ],
};

describe('Pixabay adapter', () => {
  it('maps tags to the title, the Pixabay page to url, the web-format image to the thumbnail, its host to source', () => {
    expect(parsePixabay(PIXABAY)).toEqual([
      {
        title: 'blossom, bloom, flower',
        url: 'https://pixabay.com/photos/blossom-bloom-flower-195893/',
        source: 'pixabay.com',
        thumbnail: 'https://pixabay.com/get/35bbf209e13e39d2_640.jpg',
      },
    ]);
  });

  it('falls back to the preview image, drops hits without a page', () => {
    expect(
      parsePixabay({
        hits: [
          { pageURL: 'https://pixabay.com/p/1/', previewURL: 'https://cdn.pixabay.com/1_150.jpg', webformatURL: null },
          { tags: 'no page' },
        ],
      }),
    ).toEqual([
      {
        title: '',
        url: 'https://pixabay.com/p/1/',
        source: 'pixabay.com',
        thumbnail: 'https://cdn.pixabay.com/1_150.jpg',
      },
    ]);
    expect(parsePixabay({ total: 0, totalHits: 0, hits: [] })).toEqual([]);
  });

  it("asks for the page itself, 10 per page, with the key, safe search as a boolean and a language of Pixabay's list", () => {
    const call = pixabayImagesCall(query({ page: 7, lang: 'pt', safe: false }), config)!;
    expect(call.provider).toBe('provider_05');
    expect(call.request.url.startsWith('https://pixabay.com/api/?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      key: 'pixabay-key',
      q: 'northern lights',
      page: '7',
      per_page: '10',
      image_type: 'all',
      safesearch: 'false',
      lang: 'pt',
    });
    expect(params(pixabayImagesCall(query({ lang: 'ja' }), config)!.request.url).lang).toBe('ja');
    expect(params(pixabayImagesCall(query({ lang: 'pt-BR' }), config)!.request.url).lang).toBe('pt');
    expect(params(pixabayImagesCall(query({ lang: 'ar' }), config)!.request.url)).not.toHaveProperty('lang');
    expect(params(pixabayImagesCall(query(), config)!.request.url).safesearch).toBe('true');
  });

  it('does not send a query longer than the 100 characters Pixabay accepts', () => {
    expect(pixabayImagesCall(query({ q: 'é'.repeat(100) }), config)).not.toBeNull();
    expect(pixabayImagesCall(query({ q: 'x'.repeat(101) }), config)).toBeNull();
  });
});

const SEPIA = {
  total: 1543,
  data: [
    {
      id: 9182,
      uuid: '9c9de5e8-0a1e-484a-b099-e80766180a6d',
      shortUUID: 'kkGMgK9ZtnKfYAgnEtQxbv',
      name: 'Intro to Linux',
      description: 'A short walkthrough ...',
      duration: 612,
      views: 1280,
      likes: 40,
      nsfw: false,
      isLive: false,
      publishedAt: '2024-02-10T09:15:00.000Z',
      originallyPublishedAt: null,
      url: 'https://framatube.org/w/kkGMgK9ZtnKfYAgnEtQxbv',
      thumbnailUrl: 'https://framatube.org/lazy-static/thumbnails/abc.jpg',
      previewUrl: 'https://framatube.org/lazy-static/previews/abc.jpg',
      embedUrl: 'https://framatube.org/videos/embed/9c9de5e8-0a1e-484a-b099-e80766180a6d',
      language: { id: 'en', label: 'English' },
      tags: ['linux', 'tutorial'],
      account: {
        name: 'alice',
        displayName: 'Alice',
        host: 'framatube.org',
        url: 'https://framatube.org/accounts/alice',
      },
      channel: {
        name: 'alice_channel',
        displayName: "Alice's videos",
        host: 'framatube.org',
        url: 'https://framatube.org/video-channels/alice_channel',
      },
    },
  ],
};

describe('Sepia adapter', () => {
  it('maps a PeerTube video: name, url host, thumbnail, M:SS duration, full-date age, source PeerTube', () => {
    expect(parseSepia(SEPIA)).toEqual([
      {
        title: 'Intro to Linux',
        url: 'https://framatube.org/w/kkGMgK9ZtnKfYAgnEtQxbv',
        age: 'February 10, 2024',
        published: '2024-02-10T09:15:00Z',
        source: 'PeerTube',
        duration: '10:12',
        hostname: 'framatube.org',
        thumbnail: 'https://framatube.org/lazy-static/thumbnails/abc.jpg',
        embed_url: 'https://framatube.org/videos/embed/9c9de5e8-0a1e-484a-b099-e80766180a6d',
      },
    ]);
  });

  it('formats durations as M:SS or H:MM:SS, "" for 0 or missing', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['0', ''],
      ['-5', ''],
      ['abc', ''],
      ['5', '0:05'],
      ['59', '0:59'],
      ['60', '1:00'],
      ['612', '10:12'],
      ['3599', '59:59'],
      ['3600', '1:00:00'],
      ['3725', '1:02:05'],
      ['36125.9', '10:02:05'],
    ];
    for (const [raw, expected] of cases) expect(formatDuration(raw), raw).toBe(expected);
  });

  it('writes publishedAt as "Month DD, YYYY", the date as written; "" when unparsable', () => {
    expect(formatPublished('2024-01-05T23:30:00.000Z')).toBe('January 05, 2024');
    expect(formatPublished('2024-12-31T23:30:00-05:00')).toBe('December 31, 2024');
    expect(formatPublished('2023-07-09')).toBe('July 09, 2023');
    expect(formatPublished('2023-02-30T00:00:00Z')).toBe('');
    expect(formatPublished('yesterday')).toBe('');
    expect(formatPublished('')).toBe('');
  });

  it('falls back to previewUrl, takes the host as the third "/" segment, tolerates missing fields', () => {
    expect(
      parseSepia({
        data: [{ url: 'https://tube.example:8443/w/x', previewUrl: 'https://p.example/x.jpg', duration: null }, {}],
      }),
    ).toEqual([
      {
        title: '',
        url: 'https://tube.example:8443/w/x',
        age: '',
        published: '',
        source: 'PeerTube',
        duration: '',
        hostname: 'tube.example:8443',
        thumbnail: 'https://p.example/x.jpg',
        embed_url: '',
      },
    ]);
    expect(parseSepia({ error: 'oops' })).toEqual([]);
  });

  it("joins a plain PeerTube instance's thumbnailPath (previewPath else) to the origin of SEPIA_BASE_URL", () => {
    // A PeerTube instance's search answer carries relative paths only, no thumbnailUrl.
    const instance = {
      total: 2,
      data: [
        {
          name: 'On an instance',
          url: 'https://tube.example/w/abc',
          thumbnailPath: '/lazy-static/thumbnails/abc.jpg',
          previewPath: '/lazy-static/previews/abc.jpg',
          duration: 61,
        },
        { name: 'Preview only', url: 'https://tube.example/w/def', previewPath: '/lazy-static/previews/def.jpg' },
        { name: 'Odd path', url: 'https://tube.example/w/ghi', thumbnailPath: '//evil.example/x.jpg' },
      ],
    };
    const noUrl = { data: [{ name: 'No url', uuid: '9c9de5e8-0a1e-484a-b099-e80766180a6d' }, { name: 'Nothing' }] };
    expect(parseSepia(noUrl, 'https://tube.example/api/v1').map((v) => [v.url, v.hostname])).toEqual([
      ['https://tube.example/videos/watch/9c9de5e8-0a1e-484a-b099-e80766180a6d', 'tube.example'],
    ]);
    expect(parseSepia(instance, 'https://tube.example/api/v1').map((v) => v.thumbnail)).toEqual([
      'https://tube.example/lazy-static/thumbnails/abc.jpg',
      'https://tube.example/lazy-static/previews/def.jpg',
      '',
    ]);
    const call = sepiaVideosCall(query(), { SEPIA_BASE_URL: 'https://tube.example/api/v1' });
    expect(call.parse(instance)[0]!.thumbnail).toBe('https://tube.example/lazy-static/thumbnails/abc.jpg');
  });

  it('asks with a 0-based start, nsfw from safe search, one of seven languages, and a startDate for date', () => {
    const now = new Date('2025-11-21T12:34:56.789Z');
    const call = sepiaVideosCall(query({ page: 3, safe: true, lang: 'it', date: 'w' }), config, now);
    expect(call.provider).toBe('provider_06');
    expect(call.request.url.startsWith('https://sepiasearch.org/api/v1/search/videos?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      search: 'northern lights',
      start: '20',
      count: '10',
      sort: '-match',
      nsfw: 'false',
      'languageOneOf[]': 'it',
      startDate: '2025-11-14T12:34:00.000Z',
    });
    const regional = params(sepiaVideosCall(query({ lang: 'it-CH' }), config, now).request.url);
    expect(regional['languageOneOf[]']).toBe('it');
    const off = params(sepiaVideosCall(query({ safe: false, lang: 'sv' }), config, now).request.url);
    expect(off).toEqual({ search: 'northern lights', start: '0', count: '10', sort: '-match', nsfw: 'both' });
    const windows = { d: '2025-11-20', m: '2025-10-22', y: '2024-11-21' } as const;
    for (const [date, day] of Object.entries(windows)) {
      const url = sepiaVideosCall(query({ date: date as 'd' }), config, now).request.url;
      expect(params(url).startDate).toBe(`${day}T12:34:00.000Z`);
    }
  });
});

const WORLD_NEWS = {
  offset: 0,
  number: 10,
  available: 2381,
  news: [
    {
      id: 224767206,
      title: 'Ports reopen after storm',
      text: 'Full article text ...',
      summary: 'Ports on the coast reopened ...',
      url: 'https://news.example.com/ports-reopen',
      image: 'https://news.example.com/img/ports.jpg',
      video: null,
      publish_date: '2025-11-18 10:15:00',
      author: 'Jane Doe',
      authors: ['Jane Doe'],
      language: 'en',
      source_country: 'us',
      sentiment: 0.12,
      category: 'environment',
    },
  ],
};

describe('World News adapter', () => {
  it('maps an article: summary as description, bare host, image, source "World News API", relative age', () => {
    expect(parseWorldNews(WORLD_NEWS, NOW)).toEqual([
      {
        title: 'Ports reopen after storm',
        url: 'https://news.example.com/ports-reopen',
        description: 'Ports on the coast reopened ...',
        age: '3 days ago',
        published: '2025-11-18T10:15:00Z',
        source: 'World News API',
        hostname: 'news.example.com',
        thumbnail: 'https://news.example.com/img/ports.jpg',
      },
    ]);
  });

  it('takes the text when there is no summary, drops a leading www. only, tolerates missing fields', () => {
    const [a, b] = parseWorldNews(
      {
        news: [
          { url: 'https://WWW.Paper.example:8080/a', text: 'Body', summary: '' },
          { url: 'https://wwwx.example/b', summary: null, text: null, publish_date: 'not a date' },
          { title: 'no url' },
        ],
      },
      NOW,
    );
    expect(a).toEqual({
      title: '',
      url: 'https://WWW.Paper.example:8080/a',
      description: 'Body',
      age: '',
      published: '',
      source: 'World News API',
      hostname: 'paper.example',
      thumbnail: '',
    });
    expect(b!.hostname).toBe('wwwx.example');
    expect(b!.description).toBe('');
    expect(bareHostname('not a url')).toBe('');
    expect(bareHostname('https://www.www.example/')).toBe('www.example');
  });

  it('says how long ago an article was published, in the original wording', () => {
    const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
    const day = 86_400;
    const cases: [string, string][] = [
      [ago(0), 'just now'],
      [ago(60), 'just now'],
      [ago(61), '1 minutes ago'],
      [ago(59 * 60), '59 minutes ago'],
      [ago(3600), '60 minutes ago'],
      [ago(3601), '1 hours ago'],
      [ago(23 * 3600 + 59), '23 hours ago'],
      [ago(day), '1 days ago'],
      [ago(30 * day), '30 days ago'],
      [ago(31 * day), '1 months ago'],
      [ago(365 * day), '12 months ago'],
      [ago(366 * day), '1 years ago'],
      [ago(1000 * day), '2 years ago'],
      [ago(-3600), 'just now'],
      ['2025-11-21T11:00:00Z', '60 minutes ago'],
      ['2025-11-20T11:00:00', '1 days ago'],
      ['2025-13-01 00:00:00', ''],
      ['2025-11-21', ''],
      ['', ''],
    ];
    for (const [date, expected] of cases) expect(relativeAge(date, NOW), date).toBe(expected);
  });

  it('asks with the key in a header, a result offset, newest first, one of seven languages, and an earliest date', () => {
    const now = new Date('2025-11-21T12:34:56.789Z');
    const call = worldNewsCall(query({ page: 5, lang: 'es', date: 'm' }), config, now);
    expect(call.provider).toBe('provider_07');
    expect(call.request.url.startsWith('https://api.worldnewsapi.com/search-news?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      text: 'northern lights',
      number: '10',
      offset: '40',
      sort: 'publish-time',
      'sort-direction': 'DESC',
      language: 'es',
      'earliest-publish-date': '2025-10-22 12:34:56',
    });
    expect(call.request.headers).toMatchObject({ 'x-api-key': 'worldnews-key' });
    expect(call.request.url).not.toContain('worldnews-key');
    const plain = params(worldNewsCall(query({ lang: 'ru', safe: false }), config, now).request.url);
    expect(plain).toEqual({
      text: 'northern lights',
      number: '10',
      offset: '0',
      sort: 'publish-time',
      'sort-direction': 'DESC',
    });
    expect(params(worldNewsCall(query({ date: 'd' }), config, now).request.url)['earliest-publish-date']).toBe(
      '2025-11-20 12:34:56',
    );
  });
});

describe('embed URLs of video platforms (as SearXNG derives iframe_src)', () => {
  it('gives the player page of YouTube, Vimeo and Dailymotion watch URLs, "" for anything else', () => {
    const cases: [string, string][] = [
      ['https://www.youtube.com/watch?v=dQw4w9WgXcQ', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ'],
      ['https://youtube.com/watch?list=x&v=abc_DEF-1', 'https://www.youtube-nocookie.com/embed/abc_DEF-1'],
      ['https://youtu.be/dQw4w9WgXcQ?t=5', 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ'],
      ['https://www.youtube.com/shorts/abc123', 'https://www.youtube-nocookie.com/embed/abc123'],
      ['https://vimeo.com/76979871', 'https://player.vimeo.com/video/76979871'],
      ['https://www.dailymotion.com/video/x8abcd1', 'https://www.dailymotion.com/embed/video/x8abcd1'],
      ['https://www.youtube.com/watch', ''],
      ['https://www.youtube.com/watch?v=a"b', ''],
      ['https://vimeo.com/channels/staffpicks', ''],
      ['https://example.com/watch?v=abc', ''],
      ['javascript:alert(1)', ''],
      ['not a url', ''],
    ];
    for (const [url, embed] of cases) expect(embedUrlOf(url), url).toBe(embed);
  });
});
