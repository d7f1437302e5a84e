import { describe, expect, it } from 'vitest';
import { closestHit } from '../../src/search/cards/wikipedia.js';
import {
  closeness,
  FUZZY_MATCH_MIN,
  identifyingTokens,
  isRelevant,
  matchScore,
  NAME_MATCH_MIN,
} from '../../src/search/cards/relevance.js';
import {
  explicitTitle,
  isTravelQuery,
  looksLikePlace,
  looksLikeTitle,
  type Signals,
  stackExchangeTrigger,
  travelCategory,
  tvdbTrigger,
} from '../../src/search/cards/signals.js';
import { siteOf } from '../../src/search/cards/stackexchange.js';
import { classify } from '../../src/search/cards/wikidata.js';
import { fold, keywordSet, prepareKeywordSets, similarity, similarityAtLeast } from '../../src/search/cards/text.js';

const signals = (over: Partial<Signals> & { q: string }): Signals => ({
  wikipedia: null,
  subject: null,
  urls: [],
  ...over,
});

const wiki = (title: string, description: string) => ({
  title,
  description,
  extract: '',
  url: '',
  thumbnail: '',
  wikibase_item: '',
});

describe('text', () => {
  it('folds case, accents and ß', () => {
    expect(fold('Misérables STRAßE')).toBe('miserables strasse');
  });

  it("reads a keyword set's keywords on first use or when prepared, not when made (a server start does not pay for them)", () => {
    let reads = 0;
    const keywords = (list: string[]) => ({
      *[Symbol.iterator]() {
        reads++;
        yield* list;
      },
    });
    const asked = keywordSet(keywords(['Café', 'new york']));
    const prepared = keywordSet(keywords(['rust']));
    expect(reads).toBe(0);
    expect(asked.firstAt('best cafe in New York')).toBe(5);
    expect(asked.in('cafeteria')).toBe(false);
    expect(asked.entries).toEqual(['new york', 'cafe']);
    expect(reads).toBe(1);
    prepareKeywordSets();
    expect(reads).toBe(2);
    expect(prepared.in('Rust borrow checker')).toBe(true);
    expect(reads).toBe(2);
  });

  it('measures similarity like the gestalt ratio (2 × matched / total)', () => {
    expect(similarity('abc', 'abc')).toBe(1);
    expect(similarity('inception', 'deception')).toBeCloseTo(14 / 18);
    expect(similarity('inception', 'interception')).toBeCloseTo(18 / 21);
    expect(similarity('', 'x')).toBe(0);
    expect(similarityAtLeast('a', 'a'.repeat(50), 0.8)).toBe(0);
  });
});

describe('relevance', () => {
  it('uses the thresholds of the reference', () => {
    expect(NAME_MATCH_MIN).toBe(0.5);
    expect(FUZZY_MATCH_MIN).toBe(0.8);
  });

  it('judges names on their identifying words only', () => {
    expect([...identifyingTokens('best restaurants in Lyon')]).toEqual(['lyon']);
    expect([...identifyingTokens('The Matrix film')]).toEqual(['matrix']);
  });

  it('scores token overlap, then close spellings, else nothing', () => {
    expect(matchScore('Breaking Bad', 'breaking bad')).toBe(1);
    expect(matchScore('The Matrix Reloaded', 'matrix')).toBe(1);
    expect(matchScore('Spider-Man', 'spiderman')).toBe(1);
    expect(matchScore('Incepton', 'Inception')).toBeGreaterThanOrEqual(0.8);
    // a near miss: no shared word and under 0.8 similar
    expect(matchScore('Deception', 'Inception')).toBe(0);
    expect(isRelevant('Deception', 'Inception')).toBe(false);
    expect(isRelevant('Deception', 'Inception', 'Deception (film)')).toBe(true);
  });

  it('ranks an exact title above a sequel', () => {
    expect(closeness('Toy Story', 'toy story')).toBe(1);
    expect(closeness('Toy Story 2', 'toy story')).toBeLessThan(1);
  });

  it('picks the closest relevant Wikipedia hit, or none', () => {
    const hits = [
      { title: 'Jupiter (mythology)', redirecttitle: '' },
      { title: 'Jupiter', redirecttitle: '' },
    ];
    expect(closestHit(hits, 'jupiter')?.title).toBe('Jupiter');
    expect(closestHit([{ title: 'Deception', redirecttitle: '' }], 'Inception')).toBeNull();
    expect(closestHit([{ title: 'New York City', redirecttitle: 'Big Apple' }], 'big apple')?.title).toBe(
      'New York City',
    );
  });
});

describe('triggers', () => {
  it('asks TheTVDB for films and shows, and probes title-like queries', () => {
    expect(
      tvdbTrigger(signals({ q: 'inception', wikipedia: wiki('Inception', '2010 film by Christopher Nolan') })),
    ).toEqual({ probe: false });
    expect(tvdbTrigger(signals({ q: 'x', subject: { tags: ['movie_tv'], adult: false } }))).toEqual({ probe: false });
    expect(
      tvdbTrigger(signals({ q: 'tom hanks', wikipedia: wiki('Tom Hanks', 'American actor (born 1956)') })),
    ).toBeNull();
    expect(tvdbTrigger(signals({ q: 'silent harbour tales' }))).toEqual({ probe: true });
    expect(looksLikeTitle(signals({ q: 'python tutorial for beginners' }))).toBe(false);
    // a film about a singer is a film: the first of the two words wins
    expect(tvdbTrigger(signals({ q: 'x y', wikipedia: wiki('X Y', '2018 film about a singer') }))).toEqual({
      probe: false,
    });
  });

  it('recognises travel queries and their category', () => {
    expect(isTravelQuery(signals({ q: 'best restaurants in lyon' }))).toBe(true);
    expect(travelCategory('best restaurants in lyon')).toBe('restaurants');
    expect(travelCategory('hotels and museums in rome')).toBe('');
    expect(
      isTravelQuery(signals({ q: 'eiffel tower', subject: { tags: ['place', 'travel_place'], adult: false } })),
    ).toBe(true);
    // a film named after a hotel is not a hotel
    expect(
      isTravelQuery(
        signals({
          q: 'grand budapest hotel',
          wikipedia: wiki('The Grand Budapest Hotel', '2014 film by Wes Anderson'),
          subject: { tags: ['movie_tv'], adult: false },
        }),
      ),
    ).toBe(false);
  });

  it('recognises programming questions, not about a person or a place', () => {
    expect(stackExchangeTrigger(signals({ q: 'python list comprehension' }))).toBe(true);
    expect(stackExchangeTrigger(signals({ q: 'rebase onto', urls: ['https://stackoverflow.com/questions/1/x'] }))).toBe(
      true,
    );
    expect(stackExchangeTrigger(signals({ q: 'java', subject: { tags: ['place'], adult: false } }))).toBe(false);
    expect(stackExchangeTrigger(signals({ q: 'chocolate cake' }))).toBe(false);
  });

  it('finds places for the map', () => {
    expect(looksLikePlace(signals({ q: 'map of lisbon' }))).toBe(true);
    expect(looksLikePlace(signals({ q: '10 downing street' }))).toBe(true);
    expect(
      looksLikePlace(signals({ q: 'berlin', wikipedia: wiki('Berlin', 'Capital and largest city of Germany') })),
    ).toBe(true);
    expect(looksLikePlace(signals({ q: 'berlin', subject: { tags: ['person'], adult: false } }))).toBe(false);
    expect(looksLikePlace(signals({ q: 'chocolate cake' }))).toBe(false);
  });

  it('chooses the Stack Exchange site from the results', () => {
    expect(siteOf([])).toEqual({ site: 'stackoverflow', name: 'Stack Overflow' });
    expect(siteOf(['https://example.com/', 'https://superuser.com/questions/1'])).toEqual({
      site: 'superuser',
      name: 'Super User',
    });
    expect(siteOf(['https://unix.stackexchange.com/q/1'])).toEqual({ site: 'unix', name: 'Unix Stack Exchange' });
  });

  it('spots explicit titles whole-word, accents ignored', () => {
    expect(explicitTitle('Pornography')).toBe(true);
    expect(explicitTitle('Éjaculation')).toBe(true);
    expect(explicitTitle('Sussex')).toBe(false);
    expect(explicitTitle('Pornographers Anonymous Society')).toBe(false);
  });
});

describe('Wikidata classification', () => {
  it('tags people, films and shows, places, travel places, and adult subjects', () => {
    expect(classify(['Q5'], [], { Q5: 'human' })).toEqual({ tags: ['person'], adult: false });
    expect(classify(['Q1'], [], { Q1: 'television series' }).tags).toEqual(['movie_tv']);
    expect(classify(['Q1'], [], { Q1: 'film studio' }).tags).toEqual([]);
    expect(classify(['Q570116'], [], {}).tags.sort()).toEqual(['place', 'travel_place']);
    expect(classify(['Q1'], [], { Q1: 'big city' }).tags).toEqual(['place']);
    expect(classify(['Q1'], ['Q2'], { Q1: 'concept', Q2: 'sexual activity' }).adult).toBe(true);
  });
});
