import { describe, expect, it } from 'vitest';
import { parseQuestions, parseTopAnswer } from '../../src/providers/stackexchange/questions.js';
import { parseTvdbExtended, parseTvdbSearch, thetvdbLoginCall, tvdbLanguage } from '../../src/providers/thetvdb/api.js';
import {
  parseTripadvisorDetails,
  parseTripadvisorSearch,
  ratingBubbles,
  tripadvisorSearchCall,
} from '../../src/providers/tripadvisor/locations.js';
import { parseClaimIds, parseLabels } from '../../src/providers/wikidata/classes.js';
import {
  parseWikipediaSearch,
  parseWikipediaSummary,
  summaryPathTitle,
  wikiLanguage,
  wikipediaSite,
} from '../../src/providers/wikipedia/card.js';
import { wikipediaFlow } from '../../src/search/cards/wikipedia.js';

describe('Wikipedia adapter', () => {
  it('maps lang to a wiki, and falls back to en for anything odd', () => {
    expect(wikiLanguage('')).toBe('en');
    expect(wikiLanguage('de')).toBe('de');
    expect(wikiLanguage('zh-yue')).toBe('zh-yue');
    // A region names no wiki: its language's wiki answers (pt-br.wikipedia.org does not exist).
    expect(wikiLanguage('pt-BR')).toBe('pt');
    expect(wikiLanguage('en_GB')).toBe('en');
    expect(wikiLanguage('zh-tw')).toBe('zh');
    expect(wikiLanguage('nds-nl')).toBe('nds-nl');
    expect(wikiLanguage('../x')).toBe('en');
    expect(wikiLanguage('<script>')).toBe('en');
    expect(wikipediaSite({ WIKIPEDIA_BASE_URL: 'https://{lang}.wikipedia.org' }, 'fr')).toBe(
      'https://fr.wikipedia.org',
    );
  });

  it('encodes titles for the REST path', () => {
    expect(summaryPathTitle('AC/DC (band)')).toBe('AC%2FDC_(band)');
  });

  it('is tolerant of missing fields, strict about in-band errors', () => {
    expect(parseWikipediaSearch({})).toEqual([]);
    expect(parseWikipediaSearch({ query: { search: [{ title: 'A' }, 3, { title: '' }] } })).toEqual([
      { title: 'A', redirecttitle: '' },
    ]);
    expect(() => parseWikipediaSearch({ error: { code: 'maxlag', info: 'lagged' } })).toThrow(/maxlag/);
    expect(parseWikipediaSummary({ type: 'standard', title: 'X' })).toEqual({
      title: 'X',
      description: '',
      extract: '',
      url: '',
      thumbnail: '',
      wikibase_item: '',
    });
    expect(parseWikipediaSummary({ type: 'no-extract', title: 'X' })).toBeNull();
    expect(() => parseWikipediaSummary([])).toThrow();
  });

  it('does not send a query over 300 characters', () => {
    const config = { WIKIPEDIA_BASE_URL: 'https://{lang}.wikipedia.org' };
    expect(wikipediaFlow('a'.repeat(301), '', config)).toBeNull();
    expect(wikipediaFlow('a'.repeat(300), '', config)).not.toBeNull();
  });
});

describe('Wikidata adapter', () => {
  it('reads claim class ids and English labels', () => {
    const claims = {
      claims: {
        P31: [
          { mainsnak: { datavalue: { value: { id: 'Q5' } } } },
          { mainsnak: { snaktype: 'novalue' } },
          { mainsnak: { datavalue: { value: { id: 'Q5' } } } },
          { mainsnak: { datavalue: { value: { id: 'not-an-id' } } } },
        ],
      },
    };
    expect(parseClaimIds('P31')(claims)).toEqual(['Q5']);
    expect(parseClaimIds('P279')(claims)).toEqual([]);
    expect(() => parseClaimIds('P31')({ error: { code: 'no-such-entity' } })).toThrow(/no-such-entity/);
    expect(
      parseLabels({ entities: { Q5: { labels: { en: { value: 'Human' } } }, Q9: { id: 'Q9', missing: '' } } }),
    ).toEqual({ Q5: 'human' });
  });
});

describe('TheTVDB adapter', () => {
  it('logs in with the key and the PIN only when set', () => {
    const base = { THETVDB_BASE_URL: 'https://api4.thetvdb.com/v4', THETVDB_API_KEY: 'k' };
    expect(JSON.parse(thetvdbLoginCall({ ...base, THETVDB_PIN: '' }).request.body!)).toEqual({ apikey: 'k' });
    expect(JSON.parse(thetvdbLoginCall({ ...base, THETVDB_PIN: '1234' }).request.body!)).toEqual({
      apikey: 'k',
      pin: '1234',
    });
    expect(() => thetvdbLoginCall({ ...base, THETVDB_PIN: '' }).parse({ data: {} })).toThrow();
  });

  it('keeps film and series hits only, with their other names', () => {
    expect(
      parseTvdbSearch({
        data: [
          { tvdb_id: '1', type: 'person', name: 'P' },
          {
            tvdb_id: 2,
            type: 'movie',
            name: 'M',
            slug: 'm',
            translations: { fra: 'F' },
            aliases: ['A', { name: 'B' }],
          },
          { type: 'series', name: 'no id' },
        ],
      }),
    ).toEqual([{ tvdb_id: '2', type: 'movie', name: 'M', slug: 'm', otherNames: ['F', 'A', 'B'] }]);
  });

  it('builds a card from a sparse extended record', () => {
    expect(parseTvdbExtended({ data: { firstAired: '1999-01-10' } }, 'series', 'eng', 'fallback')).toEqual({
      title: '',
      year: '1999',
      media_type: 'series',
      overview: '',
      poster: '',
      backdrop: '',
      genres: [],
      tagline: '',
      status: '',
      cast: [],
      crew: [],
      url: 'https://thetvdb.com/series/fallback',
    });
    expect(tvdbLanguage('fr')).toBe('fra');
    expect(tvdbLanguage('xx')).toBe('eng');
  });

  it('prefers the request language, then English', () => {
    const data = {
      name: 'Own',
      translations: {
        nameTranslations: [
          { language: 'eng', name: 'English' },
          { language: 'fra', name: 'Français' },
        ],
        overviewTranslations: [{ language: 'eng', overview: 'EN', tagline: 'T' }],
      },
    };
    const fr = parseTvdbExtended({ data }, 'movie', 'fra', 's');
    expect([fr.title, fr.overview, fr.tagline, fr.url]).toEqual([
      'Français',
      'EN',
      'T',
      'https://thetvdb.com/movies/s',
    ]);
  });
});

describe('Tripadvisor adapter', () => {
  it('sends the key, the query (at most 500 characters), the category and the language', () => {
    const call = tripadvisorSearchCall('q'.repeat(600), 'hotels', 'de', {
      TRIPADVISOR_BASE_URL: 'https://api.content.tripadvisor.com/api/v1',
      TRIPADVISOR_API_KEY: 'secret',
    });
    const url = new URL(call.request.url);
    expect(url.pathname).toBe('/api/v1/location/search');
    expect(url.searchParams.get('searchQuery')).toHaveLength(500);
    expect(Object.fromEntries([...url.searchParams].filter(([k]) => k !== 'searchQuery'))).toEqual({
      key: 'secret',
      category: 'hotels',
      language: 'de',
    });
  });

  it('rates in bubbles', () => {
    expect(ratingBubbles(5)).toEqual(['full', 'full', 'full', 'full', 'full']);
    expect(ratingBubbles(4.2)).toEqual(['full', 'full', 'full', 'full', 'empty']);
    expect(ratingBubbles(0.3)).toEqual(['half', 'empty', 'empty', 'empty', 'empty']);
  });

  it('is tolerant of missing and malformed details', () => {
    expect(
      parseTripadvisorSearch({
        data: [
          { location_id: 'x', name: 'bad id' },
          { location_id: '1', name: 'A' },
        ],
      }),
    ).toEqual([{ location_id: '1', name: 'A', place: '' }]);
    expect(parseTripadvisorDetails({ name: 'N', rating: 'n/a', latitude: '95', longitude: '2' })).toEqual({
      name: 'N',
      geo: '',
      address: '',
      rating: null,
      rating_bubbles: [],
      num_reviews: 0,
      description: '',
      url: '',
      latitude: null,
      longitude: null,
    });
    expect(() => parseTripadvisorDetails({ error: { type: 'Unauthorized' } })).toThrow(/Unauthorized/);
  });
});

describe('Stack Exchange adapter', () => {
  it('decodes titles, keeps five tags, and treats the error wrapper as a failure', () => {
    expect(
      parseQuestions({
        items: [
          { question_id: 1, title: 'A &amp; B &quot;c&quot;', tags: ['a', 'b', 'c', 'd', 'e', 'f'], score: 3 },
          { title: 'no id' },
        ],
      }),
    ).toEqual([
      {
        question_id: 1,
        title: 'A & B "c"',
        link: '',
        score: 3,
        answer_count: 0,
        view_count: 0,
        is_answered: false,
        tags: ['a', 'b', 'c', 'd', 'e'],
      },
    ]);
    expect(() => parseQuestions({ error_id: 502, error_name: 'throttle_violation' })).toThrow(/throttle_violation/);
    expect(parseTopAnswer({ items: [] }, 'q')).toBeNull();
    expect(parseTopAnswer({ items: [{ body: '<b>x</b>', link: 'https://a/1' }] }, 'q')).toEqual({
      body: '<b>x</b>',
      is_long: false,
      score: 0,
      is_accepted: false,
      url: 'https://a/1',
    });
  });
});
