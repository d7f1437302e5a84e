/*
 * Text primitives of card relevance: folding (case, accents, ß), words,
 * whole-word keyword search, and a character similarity ratio (the
 * Ratcliff/Obershelp "gestalt" measure: twice the matched characters over
 * the total length, matches found as the longest common block, then the
 * same on each side of it).
 */

/** Lower-cased, ß as ss, accents removed: "Misérables" ~ "miserables", "Straße" ~ "strasse". */
export function fold(text: string): string {
  return text
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '');
}

const WORD = /[\p{L}\p{N}_]+/gu;

/** The folded words of a text (letters, digits, underscore). */
export function words(text: string): string[] {
  return fold(text).match(WORD) ?? [];
}

/** A word's matching form: a trailing plural "s" dropped ("restaurants" ~ "restaurant"), not from "ss" words. */
export function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A whole-word matcher for a set of keywords and phrases (folded, so accents
 * and case never matter). `firstAt(text)` is the position of the earliest
 * keyword in the folded text, or -1; `in(text)` whether there is one.
 */
export interface KeywordSet {
  firstAt(text: string): number;
  in(text: string): boolean;
  /** The folded keywords (for building other sets). */
  readonly entries: readonly string[];
}

/** Vocabulary tables not made yet (madeOnFirstUse), for prepareKeywordSets. */
const unmade = new Set<() => unknown>();

/**
 * `make()`, run on the first call of the returned function (or by prepareKeywordSets), not now. The
 * card vocabulary's tables are declared as their modules load, and folding every keyword and
 * compiling their expressions took ~35 ms of CPU in each server process at start (a worker's CPU
 * profile), before it could listen.
 */
export function madeOnFirstUse<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  const get = () => {
    if (!made) {
      made = { value: make() };
      unmade.delete(get);
    }
    return made.value;
  };
  unmade.add(get);
  return get;
}

/** A keyword set, built on first use (madeOnFirstUse). */
export function keywordSet(keywords: Iterable<string>): KeywordSet {
  const built = madeOnFirstUse(() => {
    const entries = [...new Set([...keywords].map(fold))].sort((a, b) => b.length - a.length);
    const pattern = new RegExp(
      `(?<![\\p{L}\\p{N}_])(?:${entries.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}_])`,
      'u',
    );
    return { entries, pattern };
  });
  const firstAt = (text: string) => {
    if (!text) return -1;
    const m = built().pattern.exec(fold(text));
    return m ? m.index : -1;
  };
  return {
    firstAt,
    in: (text) => firstAt(text) >= 0,
    get entries() {
      return built().entries;
    },
  };
}

/** Makes every vocabulary table not made yet (a warm-up once the server listens, so that no request pays for it). */
export function prepareKeywordSets(): void {
  for (const get of [...unmade]) get();
}

/** Length of the longest common block of a[alo..ahi) and b[blo..bhi), with its start in each (earliest first). */
function longestBlock(
  a: string,
  b: string,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
): [number, number, number] {
  let bestI = alo;
  let bestJ = blo;
  let best = 0;
  let prev = new Uint32Array(bhi - blo + 1);
  let row = new Uint32Array(bhi - blo + 1);
  for (let i = alo; i < ahi; i++) {
    for (let j = blo; j < bhi; j++) {
      const k = a.charCodeAt(i) === b.charCodeAt(j) ? prev[j - blo]! + 1 : 0;
      row[j - blo + 1] = k;
      if (k > best) {
        best = k;
        bestI = i - k + 1;
        bestJ = j - k + 1;
      }
    }
    [prev, row] = [row, prev];
  }
  return [bestI, bestJ, best];
}

/** Characters of a and b matched by repeatedly taking the longest common block. */
function matchedCharacters(a: string, b: string): number {
  let total = 0;
  const todo: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (todo.length > 0) {
    const [alo, ahi, blo, bhi] = todo.pop()!;
    const [i, j, k] = longestBlock(a, b, alo, ahi, blo, bhi);
    if (k === 0) continue;
    total += k;
    if (alo < i && blo < j) todo.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) todo.push([i + k, ahi, j + k, bhi]);
  }
  return total;
}

/** Similarity of two strings, 0..1 (1 = identical). */
export function similarity(a: string, b: string): number {
  if (!a || !b) return 0;
  if (a === b) return 1;
  return (2 * matchedCharacters(a, b)) / (a.length + b.length);
}

/**
 * similarity(a, b) when it reaches `floor`, else 0. Pairs whose lengths
 * alone rule the floor out are not compared (long inputs stay cheap).
 */
export function similarityAtLeast(a: string, b: string, floor: number): number {
  if (!a || !b) return 0;
  const bound = (2 * Math.min(a.length, b.length)) / (a.length + b.length);
  if (bound < floor) return 0;
  const ratio = similarity(a, b);
  return ratio >= floor ? ratio : 0;
}
