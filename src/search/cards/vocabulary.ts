import { z } from 'zod';
import { loadLanguageFiles, wordList } from '../language-files.js';

/*
 * Word lists behind the cards' triggers (what a query or a Wikipedia short
 * description is about), read from vocabulary/cards/<language>.json
 * (language-files.ts) and merged over every language. Matched whole-word
 * after folding (text.ts), so accents and case never matter. Programming
 * vocabulary is English only (so is most of Stack Exchange). The sites
 * are in sites.ts.
 */

/** A language may leave a list out (none of its words is needed there). */
const list = wordList.default([]);

const cardVocabulary = z.strictObject({
  /** A Wikipedia description naming a film or a show. */
  screen: list,
  /** A Wikipedia description naming a person (by trade). */
  person: list,
  /** A Wikipedia description naming a geographic place or a built landmark. */
  place: list,
  /** A Wikipedia description naming somewhere to eat, sleep or visit. */
  venue: list,
  /** Query words asking for somewhere to eat (Tripadvisor category `restaurants`). */
  eat: list,
  /** Query words asking for somewhere to sleep (`hotels`). */
  stay: list,
  /** Query words asking for something to see or do (`attractions`). */
  visit: list,
  /** Phrases that ask where something is. */
  placePhrases: list,
  /** Street types: with a house number, a query is an address. */
  street: list,
  /** A query about code. */
  programming: list,
  /** Words that make a query informational rather than a title (matched accent-folded, unstemmed). */
  notATitle: list,
  /** Words that never identify a subject (articles, prepositions, vague qualifiers). */
  stopwords: list,
  /** Title words that name an explicit sexual subject (safe search hides such a Wikipedia card). */
  explicitTitle: list,
});

const LANGUAGES = Object.values(loadLanguageFiles('cards', cardVocabulary));
const merged = (key: keyof z.infer<typeof cardVocabulary>): readonly string[] => [
  ...new Set(LANGUAGES.flatMap((language) => language[key])),
];

export const SCREEN_WORDS = merged('screen');
export const PERSON_WORDS = merged('person');
export const PLACE_WORDS = merged('place');
export const VENUE_WORDS = merged('venue');
export const EAT_WORDS = merged('eat');
export const STAY_WORDS = merged('stay');
export const VISIT_WORDS = merged('visit');
export const PLACE_PHRASES = merged('placePhrases');
export const STREET_WORDS = merged('street');
export const PROGRAMMING_WORDS = merged('programming');
export const NOT_A_TITLE = merged('notATitle');
export const STOPWORDS = merged('stopwords');
export const EXPLICIT_TITLE_WORDS = merged('explicitTitle');
