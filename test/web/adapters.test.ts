import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import {
  BRAVE_COUNTRIES,
  BRAVE_SEARCH_LANGS,
  braveCountry,
  braveRefusal,
  braveSearchLang,
} from '../../src/providers/brave/common.js';
import { braveSuggestCall, parseBraveSuggest } from '../../src/providers/brave/suggest.js';
import { braveWebAccepts, braveWebCall, parseBraveWeb } from '../../src/providers/brave/web.js';
import { marginaliaCall, parseMarginalia } from '../../src/providers/marginalia/web.js';
import { mojeekCall, parseMojeek } from '../../src/providers/mojeek/web.js';
import {
  parseStaan,
  STAAN_MARKETS,
  staanAccepts,
  staanCall,
  staanMarket,
  staanRefusal,
} from '../../src/providers/staan/web.js';
import type { WebQuery } from '../../src/contracts/search.js';
import { normalizedQuery, params } from '../helpers/provider-calls.js';

const config = parseConfig({
  BRAVE_API_KEY: 'bk',
  BRAVE_SUGGEST_API_KEY: 'sk',
  MOJEEK_API_KEY: 'mk',
  MARGINALIA_API_KEY: 'public',
  STAAN_API_KEY: 'st',
  STAAN_BASE_URL: 'https://staan.test/v2/',
});
const query = (over: Partial<WebQuery> = {}) => normalizedQuery('a b&c', over);

const EMPTY = {
  title: '',
  url: '',
  description: '',
  display_url: '',
  favicon_url: '',
  age: '',
  published: '',
  sitelinks: [],
};

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
      country: 'NL',
      freshness: 'py',
    });
    expect(call.request.headers).toMatchObject({ 'X-Subscription-Token': 'bk', Accept: 'application/json' });
  });

  it("maps lang to Brave's own search_lang list, and sends none for a language Brave lacks", () => {
    const cases: [string, string][] = [
      ['pt', 'pt-pt'],
      ['pt-br', 'pt-br'],
      ['pt_BR', 'pt-br'],
      ['pt-pt', 'pt-pt'],
      ['ja', 'jp'],
      ['ja-jp', 'jp'],
      ['zh', 'zh-hans'],
      ['zh-cn', 'zh-hans'],
      ['zh-tw', 'zh-hant'],
      ['zh-hk', 'zh-hant'],
      ['zh-hant', 'zh-hant'],
      ['zh-hans-hk', 'zh-hans'],
      ['no', 'nb'],
      ['nb', 'nb'],
      ['en', 'en'],
      ['en-gb', 'en-gb'],
      ['en-us', 'en'],
      ['de-at', 'de'],
      ['el', ''],
      ['xx', ''],
      ['sw', ''],
    ];
    for (const [lang, expected] of cases) expect([lang, braveSearchLang(lang)]).toEqual([lang, expected]);
    for (const [lang] of cases) {
      const sent = params(braveWebCall(query({ lang }), config).request.url).search_lang;
      if (sent !== undefined) expect(BRAVE_SEARCH_LANGS.has(sent)).toBe(true);
    }
    expect(params(braveWebCall(query({ lang: 'el' }), config).request.url)).not.toHaveProperty('search_lang');
  });

  it("sends country from lang's region when Brave lists it, else the language's country, in upper case", () => {
    expect(braveCountry('pt-br')).toBe('BR');
    expect(braveCountry('pt')).toBe('PT');
    expect(braveCountry('en-gb')).toBe('GB');
    expect(braveCountry('en')).toBe('US');
    expect(braveCountry('zh-tw')).toBe('TW');
    expect(braveCountry('en-ie')).toBe('US');
    expect(braveCountry('ja')).toBe('');
    for (const lang of ['pt-br', 'fr-ca', 'de-ch', 'es-mx', 'nl-be', 'en-au']) {
      expect(BRAVE_COUNTRIES.has(params(braveWebCall(query({ lang }), config).request.url).country!)).toBe(true);
    }
  });

  it('is asked for pages 1-10 only (offset 0-9) and queries Brave takes', () => {
    expect(braveWebAccepts({ q: 'x', page: 10 })).toBe(true);
    expect(braveWebAccepts({ q: 'x', page: 11 })).toBe(false);
    expect(braveWebAccepts({ q: 'x '.repeat(51), page: 1 })).toBe(false);
  });

  it("reads Brave's 422 VALIDATION as a refusal naming the parameter, and a bad key as no refusal", () => {
    const sent = new URLSearchParams({ q: 'x', search_lang: 'zh', offset: '12' });
    const enumBody = JSON.stringify({
      type: 'ErrorResponse',
      error: {
        id: 'e008f95d',
        status: 422,
        code: 'VALIDATION',
        detail: 'Unable to validate request parameter(s)',
        meta: {
          errors: [{ type: 'enum', loc: ['query', 'search_lang'], msg: "Input should be 'ar' or 'vi'", input: 'zh' }],
        },
      },
      time: 1,
    });
    expect(braveRefusal(422, enumBody, sent)).toMatchObject({
      cause: 'mapping',
      parameter: 'lang',
      upstreamParameter: 'search_lang',
      value: 'zh',
    });
    // Cut short, it still says which parameter.
    expect(braveRefusal(422, enumBody.slice(0, 220), sent)?.upstreamParameter).toBe('search_lang');
    const offsetBody = enumBody.replace('search_lang', 'offset');
    expect(braveRefusal(422, offsetBody, sent)).toMatchObject({ cause: 'caller', parameter: 'page', value: '' });
    const badKey = JSON.stringify({
      type: 'ErrorResponse',
      error: { status: 422, code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' },
    });
    expect(braveRefusal(422, badKey, sent)).toBeNull();
    const noHeader = enumBody.replace('["query","search_lang"]', '["header","x-subscription-token"]');
    expect(braveRefusal(422, noHeader, sent)).toBeNull();
    expect(braveRefusal(429, enumBody, sent)).toBeNull();
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
            title: ' B\n\t ',
            description: 'one\n  <strong>two</strong> ',
            meta_url: { netloc: 'b.example', path: '  ›  p  ' },
            profile: { img: 'i' },
            age: '1 day ago',
            page_age: '2026-12-06T07:08:09',
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
        description: 'one <strong>two</strong>',
        display_url: 'b.example › p',
        favicon_url: 'i',
        age: '1 day ago',
        published: '2026-12-06T07:08:09Z',
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
  it('asks for 7 (Brave answers 5 without count), uses the suggest key and keeps at most 7 non-empty strings', () => {
    const call = braveSuggestCall('albert', config)!;
    expect(params(call.request.url)).toEqual({ q: 'albert', count: '7' });
    expect(call.request.headers?.['X-Subscription-Token']).toBe('sk');
    const results = ['a', '', null, 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((query) => ({ query }));
    expect(parseBraveSuggest({ results })).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(parseBraveSuggest({})).toEqual([]);
  });
});

describe('Mojeek adapter', () => {
  it("builds the request with Mojeek's own parameters: s, t, safe, lb/lbb, since, and the key", () => {
    const now = new Date('2026-03-10T12:00:00Z');
    const call = mojeekCall(query({ page: 2, lang: 'de-at', safe: false, date: 'w' }), config, now);
    expect(call.request.url.startsWith('https://api.mojeek.com/search?')).toBe(true);
    expect(params(call.request.url)).toEqual({
      q: 'a b&c',
      s: '11',
      t: '10',
      safe: '0',
      lb: 'DE',
      lbb: '10',
      since: '20260303',
      fmt: 'json',
      api_key: 'mk',
    });
    const plain = params(mojeekCall(query(), config, now).request.url);
    expect(plain).toEqual({ q: 'a b&c', s: '1', t: '10', safe: '1', fmt: 'json', api_key: 'mk' });
    expect(params(mojeekCall(query({ date: 'd' }), config, now).request.url).since).toBe('day');
    expect(params(mojeekCall(query({ date: 'm' }), config, now).request.url).since).toBe('month');
    expect(params(mojeekCall(query({ date: 'y' }), config, now).request.url).since).toBe('year');
    expect(params(mojeekCall(query({ lang: 'x-klingon' }), config, now).request.url)).not.toHaveProperty('lb');
  });

  it("writes a result's date (Unix seconds) as its age, and none for anything else", () => {
    const slice = parseMojeek({
      response: {
        status: 'OK',
        results: [
          { url: 'https://a.example/', date: 1700000000 },
          { url: 'https://b.example/', date: '1700000000' },
          { url: 'https://c.example/', date: 'yesterday' },
          { url: 'https://d.example/' },
        ],
      },
    });
    expect(slice.results.map((r) => r.age)).toEqual(['November 14, 2023', 'November 14, 2023', '', '']);
    expect(slice.results.map((r) => r.published)).toEqual(['2023-11-14T22:13:20Z', '2023-11-14T22:13:20Z', '', '']);
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

  it("parses results tolerantly, the index's raw layout whitespace made one space", () => {
    expect(parseMarginalia({ results: [{ url: 'https://m.example/x', title: 'M', quality: -2 }] }).results).toEqual([
      { ...EMPTY, url: 'https://m.example/x', title: 'M', display_url: 'm.example' },
    ]);
    const raw = { url: 'https://m.example/y', title: '\n\t\t\tLinear B\n\t\t\t', description: 'Notes\n\t\ton it ' };
    expect(parseMarginalia({ results: [raw] }).results[0]).toMatchObject({
      title: 'Linear B',
      description: 'Notes on it',
    });
    expect(parseMarginalia({ license: 'x' }).results).toEqual([]);
  });
});

describe('Staan adapter', () => {
  it("builds the request with a result offset, one of Staan's lower-case markets and a bearer token", () => {
    const call = staanCall(query({ page: 3, lang: 'de' }), config);
    expect(call.request.url.startsWith('https://staan.test/v2/search/web?')).toBe(true);
    expect(params(call.request.url)).toEqual({ q: 'a b&c', offset: '20', market: 'de-de' });
    expect(call.request.headers?.Authorization).toBe('Bearer st');
    expect(params(staanCall(query({ lang: 'en-gb' }), config).request.url)).toEqual({
      q: 'a b&c',
      offset: '0',
      market: 'en-gb',
    });
    expect(params(staanCall(query({ lang: 'es' }), config).request.url)).toEqual({ q: 'a b&c', offset: '0' });
  });

  it('maps lang to a market Staan lists, by region first, else by language', () => {
    const cases: [string, string][] = [
      ['en', 'en-us'],
      ['en-US', 'en-us'],
      ['en-gb', 'en-gb'],
      ['en-uk', 'en-gb'],
      ['en_ca', 'en-ca'],
      ['en-de', 'en-us'],
      ['fr', 'fr-fr'],
      ['fr-ca', 'fr-fr'],
      ['de-at', 'de-de'],
      ['it', ''],
    ];
    for (const [lang, market] of cases) {
      expect([lang, staanMarket(lang)]).toEqual([lang, market]);
      if (market) expect(STAAN_MARKETS.has(market)).toBe(true);
    }
  });

  it("reads Staan's 400 naming the parameter as a refusal, and a credentials error as none", () => {
    const sent = new URLSearchParams({ q: 'x', offset: '0', market: 'en-US' });
    const market = JSON.stringify({
      statusCode: 400,
      error: 'Bad Request',
      message: ['market must be one of the following values: fr-fr, de-de'],
    });
    expect(staanRefusal(400, market, sent)).toMatchObject({
      cause: 'mapping',
      parameter: 'lang',
      upstreamParameter: 'market',
      value: 'en-US',
    });
    const offset = market.replace(
      'market must be one of the following values: fr-fr, de-de',
      'offset must not be greater than 30',
    );
    expect(staanRefusal(400, offset, sent)).toMatchObject({ cause: 'caller', parameter: 'page' });
    expect(staanRefusal(401, JSON.stringify({ code: 'INVALID_CREDENTIALS', message: 'bad' }), sent)).toBeNull();
  });

  it('accepts pages 1-4 and queries of at most 400 characters only', () => {
    expect(staanAccepts({ q: 'x', page: 4 })).toBe(true);
    expect(staanAccepts({ q: 'x', page: 5 })).toBe(false);
    expect(staanAccepts({ q: 'é'.repeat(400), page: 1 })).toBe(true);
    expect(staanAccepts({ q: '😀'.repeat(400), page: 1 })).toBe(true);
    expect(staanAccepts({ q: 'x'.repeat(401), page: 1 })).toBe(false);
  });

  it('writes published_date as the age, and as published (midnight UTC)', () => {
    const slice = parseStaan({ web: { results: [{ url: 'https://s.example/a', published_date: '2025-03-04' }] } });
    expect(slice.results[0]!.age).toBe('March 04, 2025');
    expect(slice.results[0]!.published).toBe('2025-03-04T00:00:00Z');
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
