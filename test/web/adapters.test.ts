import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { braveSuggestCall, parseBraveSuggest } from '../../src/providers/brave/suggest.js';
import { braveWebCall, parseBraveWeb } from '../../src/providers/brave/web.js';
import { marginaliaCall, parseMarginalia } from '../../src/providers/marginalia/web.js';
import { mojeekCall, parseMojeek } from '../../src/providers/mojeek/web.js';
import { parseStaan, staanAccepts, staanCall } from '../../src/providers/staan/web.js';
import type { WebQuery } from '../../src/contracts/search.js';

const config = parseConfig({
  BRAVE_API_KEY: 'bk',
  BRAVE_SUGGEST_API_KEY: 'sk',
  MOJEEK_API_KEY: 'mk',
  MARGINALIA_API_KEY: 'public',
  STAAN_API_KEY: 'st',
  STAAN_BASE_URL: 'https://staan.test/v2/',
});
const query = (over: Partial<WebQuery> = {}): WebQuery => ({
  q: 'a b&c',
  page: 1,
  safe: true,
  lang: '',
  date: '',
  ...over,
});
const params = (url: string) => Object.fromEntries(new URL(url).searchParams);

const EMPTY = { title: '', url: '', description: '', display_url: '', favicon_url: '', age: '', sitelinks: [] };

describe('Brave web adapter', () => {
  it('builds the request from the normalized parameters and the config', () => {
    const call = braveWebCall(query({ page: 10, lang: 'nl', safe: false, date: 'y' }), config);
    expect(call.provider).toBe('provider_01');
    expect(call.request.url.startsWith('https://api.search.brave.com/res/v1/web/search?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      q: 'a b&c',
      count: '10',
      offset: '9',
      safesearch: 'off',
      search_lang: 'nl',
      country: 'nl',
      freshness: 'py',
    });
    expect(call.request.headers).toMatchObject({ 'X-Subscription-Token': 'bk', Accept: 'application/json' });
  });

  it('parses tolerantly: missing fields become "" or [], items without a URL or not objects are dropped', () => {
    expect(parseBraveWeb({})).toEqual({ results: [], altered: '' });
    expect(parseBraveWeb({ web: { results: 'nope' }, query: { altered: null } })).toEqual({ results: [], altered: '' });
    const slice = parseBraveWeb({
      query: { altered: 'fixed' },
      web: {
        results: [
          null,
          7,
          { title: 'no url' },
          { url: 'https://a.example/', meta_url: { netloc: 'a.example', path: '  ' }, deep_results: { buttons: 'x' } },
          {
            url: 'https://b.example/p',
            title: 'B',
            meta_url: { netloc: 'b.example', path: '› p' },
            profile: { img: 'i' },
            age: '1 day ago',
            deep_results: { buttons: [{ title: 's', url: 'u', extra: 1 }] },
          },
        ],
      },
    });
    expect(slice.altered).toBe('fixed');
    expect(slice.results).toEqual([
      { ...EMPTY, url: 'https://a.example/', display_url: 'a.example' },
      {
        ...EMPTY,
        url: 'https://b.example/p',
        title: 'B',
        display_url: 'b.example › p',
        favicon_url: 'i',
        age: '1 day ago',
        sitelinks: [{ title: 's', url: 'u', extra: 1 }],
      },
    ]);
  });

  it('rejects a body that is not a JSON object', () => {
    expect(() => parseBraveWeb([])).toThrow();
    expect(() => parseBraveWeb('html')).toThrow();
  });
});

describe('Brave suggest adapter', () => {
  it('uses the suggest key and keeps at most 7 non-empty strings', () => {
    const call = braveSuggestCall('albert', config)!;
    expect(params(call.request.url)).toEqual({ q: 'albert' });
    expect(call.request.headers?.['X-Subscription-Token']).toBe('sk');
    const results = ['a', '', null, 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((query) => ({ query }));
    expect(parseBraveSuggest({ results })).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(parseBraveSuggest({})).toEqual([]);
  });
});

describe('Mojeek adapter', () => {
  it('builds the request with a 1-based start index and the key as a query parameter', () => {
    const call = mojeekCall(query({ page: 2, lang: 'de-at' }), config);
    expect(call.request.url.startsWith('https://api.mojeek.com/search?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      q: 'a b&c',
      results: '10',
      s: '11',
      language: 'DE-AT',
      fmt: 'json',
      api_key: 'mk',
    });
  });

  it('treats any response.status other than "OK" as a failure, even in a 200 answer', () => {
    expect(() => parseMojeek({ response: { status: 'ERROR: Daily Limit Reached' } })).toThrow(/Daily Limit Reached/);
    expect(() => parseMojeek({ response: {} })).toThrow();
    expect(() => parseMojeek({})).toThrow();
  });

  it('maps title, url and desc, and takes display_url from the URL netloc', () => {
    const slice = parseMojeek({
      response: {
        status: 'OK',
        results: [{ url: 'https://www.Ex.org:81/a', title: 't', desc: 'd' }, { url: 'x' }, 'junk'],
      },
    });
    expect(slice.results).toEqual([
      { ...EMPTY, url: 'https://www.Ex.org:81/a', title: 't', description: 'd', display_url: 'www.Ex.org:81' },
      { ...EMPTY, url: 'x' },
    ]);
  });
});

describe('Marginalia adapter', () => {
  it('builds the request with the key in the API-Key header and nsfw from safe search', () => {
    const on = marginaliaCall(query({ page: 4 }), config);
    expect(params(on.request.url)).toEqual({ query: 'a b&c', count: '10', page: '4', nsfw: '1' });
    expect(on.request.headers?.['API-Key']).toBe('public');
    expect(params(marginaliaCall(query({ safe: false }), config).request.url).nsfw).toBe('0');
  });

  it('parses results tolerantly', () => {
    expect(parseMarginalia({ results: [{ url: 'https://m.example/x', title: 'M', quality: -2 }] }).results).toEqual([
      { ...EMPTY, url: 'https://m.example/x', title: 'M', display_url: 'm.example' },
    ]);
    expect(parseMarginalia({ license: 'x' }).results).toEqual([]);
  });
});

describe('Staan adapter', () => {
  it('builds the request with a result offset, a market for en/fr/de and a bearer token', () => {
    const call = staanCall(query({ page: 3, lang: 'de' }), config);
    expect(call.request.url.startsWith('https://staan.test/v2/search/web?')).toBe(true);
    expect(params(call.request.url)).toEqual({ q: 'a b&c', offset: '20', market: 'de-DE' });
    expect(call.request.headers?.Authorization).toBe('Bearer st');
    expect(params(staanCall(query({ lang: 'en-gb' }), config).request.url)).toEqual({ q: 'a b&c', offset: '0' });
  });

  it('accepts pages 1-4 and queries of at most 400 characters only', () => {
    expect(staanAccepts({ q: 'x', page: 4 })).toBe(true);
    expect(staanAccepts({ q: 'x', page: 5 })).toBe(false);
    expect(staanAccepts({ q: 'é'.repeat(400), page: 1 })).toBe(true);
    expect(staanAccepts({ q: '😀'.repeat(400), page: 1 })).toBe(true);
    expect(staanAccepts({ q: 'x'.repeat(401), page: 1 })).toBe(false);
  });

  it('maps snippet, display_url (else hostname) and favicon_url', () => {
    const slice = parseStaan({
      web: {
        results: [
          { url: 'https://s.example/a', title: 'S', snippet: 'sn', display_url: 's.example › a', favicon_url: 'f' },
          { url: 'https://t.example/b', hostname: 't.example' },
        ],
      },
    });
    expect(slice.results).toEqual([
      {
        ...EMPTY,
        url: 'https://s.example/a',
        title: 'S',
        description: 'sn',
        display_url: 's.example › a',
        favicon_url: 'f',
      },
      { ...EMPTY, url: 'https://t.example/b', display_url: 't.example' },
    ]);
  });
});
