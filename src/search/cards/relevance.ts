import { madeOnFirstUse, similarityAtLeast, stem, words } from './text.js';
import { EAT_WORDS, PERSON_WORDS, SCREEN_WORDS, STAY_WORDS, STOPWORDS, VISIT_WORDS } from './vocabulary.js';

/*
 * Does a name a provider found match what was searched? (reference section
 * 5: token and similarity matching, thresholds 0.5 and 0.8.)
 *
 * - Identifying tokens: folded, stemmed words without stopwords and without
 *   the category nouns that only steer the triggers ("restaurant", "film",
 *   "actor"…), so "best restaurants in lyon" is judged on "lyon" and "the
 *   matrix film" on "matrix".
 * - matchScore(name, reference): the share of the smaller token set found in
 *   the other (overlap coefficient); when no token is shared, the character
 *   similarity of the two squeezed texts when it reaches 0.8 (a misspelling,
 *   "spiderman" for "Spider-Man"), else 0.
 * - A name is relevant when it scores at least 0.5 against one reference.
 * - closeness(title, query) ranks several relevant names: Jaccard overlap of
 *   their tokens (standalone digits count, so a sequel's "2" matters), the
 *   0.8 similarity fallback otherwise.
 */

export const NAME_MATCH_MIN = 0.5;
export const FUZZY_MATCH_MIN = 0.8;

/** Words that identify nothing (stopwords, the vocabulary's kinds of things). */
const filler = madeOnFirstUse(
  (): ReadonlySet<string> =>
    new Set(
      [
        ...STOPWORDS,
        ...[...SCREEN_WORDS, ...PERSON_WORDS, ...EAT_WORDS, ...STAY_WORDS, ...VISIT_WORDS].flatMap((k) =>
          words(k).filter((w) => w.length > 1),
        ),
      ].flatMap((w) => words(w).map(stem)),
    ),
);
const isFiller = (token: string) => filler().has(token);

/** The words that identify a subject: stemmed, at least two characters, no filler. */
export function identifyingTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of words(text)) {
    const t = stem(w);
    if (t.length > 1 && !isFiller(t)) out.add(t);
  }
  return out;
}

/** As identifyingTokens, but single digits count ("Toy Story 2"). */
function rankingTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of words(text)) {
    const t = stem(w);
    if ((t.length > 1 || /^\p{N}$/u.test(t)) && !isFiller(t)) out.add(t);
  }
  return out;
}

/** The text as one run of stemmed words ("Spider-Man" -> "spiderman"). */
function squeezed(text: string): string {
  return words(text).map(stem).join('');
}

function shared(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let n = 0;
  for (const t of a) if (b.has(t)) n++;
  return n;
}

/** Character similarity of two texts (squeezed) when at least 0.8, else 0. */
export function fuzzyMatch(a: string, b: string): number {
  return similarityAtLeast(squeezed(a), squeezed(b), FUZZY_MATCH_MIN);
}

/** How strongly `name` matches `reference`, 0..1. */
export function matchScore(name: string, reference: string): number {
  const n = identifyingTokens(name);
  const r = identifyingTokens(reference);
  if (n.size > 0 && r.size > 0) {
    const overlap = shared(n, r) / Math.min(n.size, r.size);
    if (overlap > 0) return overlap;
  }
  return fuzzyMatch(name, reference);
}

/** Whether `name` plausibly names the subject of one of the references (the query, the Wikipedia title). */
export function isRelevant(name: string, ...references: string[]): boolean {
  if (!name) return false;
  return references.some((ref) => ref !== '' && matchScore(name, ref) >= NAME_MATCH_MIN);
}

/** How closely a title matches the query, 0..1 (ranks relevant candidates). */
export function closeness(title: string, query: string): number {
  const t = rankingTokens(title);
  const q = rankingTokens(query);
  if (t.size === 0 || q.size === 0) return 0;
  const both = shared(t, q);
  if (both > 0) return both / (t.size + q.size - both);
  return fuzzyMatch(title, query);
}

/** Whether two texts share an identifying word (an address naming the town the query names). */
export function sharesToken(a: string, b: string): boolean {
  const bt = identifyingTokens(b);
  for (const t of identifyingTokens(a)) if (bt.has(t)) return true;
  return false;
}

/**
 * The best candidate: among those with a relevant name (any of its names
 * against any reference), the one whose name is closest to the query (ties:
 * the upstream's order). null when none is relevant.
 */
export function bestMatch<T>(
  candidates: readonly T[],
  namesOf: (c: T) => string[],
  query: string,
  references: string[],
): { candidate: T; closeness: number } | null {
  let best: { candidate: T; closeness: number } | null = null;
  for (const c of candidates) {
    const names = namesOf(c).filter(Boolean);
    if (!names.some((n) => isRelevant(n, ...references))) continue;
    const score = Math.max(...names.map((n) => closeness(n, query)));
    if (best === null || score > best.closeness) best = { candidate: c, closeness: score };
  }
  return best;
}
