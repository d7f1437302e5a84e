/*
 * Small text helpers shared by the instant-answer handlers: query
 * normalisation, phrase lists compiled to regular expressions, and number
 * formatting for people.
 */

/**
 * A plain lowercase word: already in the form the name normalisers of the unit and currency
 * handlers give (the usual case, which skips their replaces).
 */
export const PLAIN_WORD = /^[a-z]+$/;

/** Lowercased, typographic quotes straightened, whitespace collapsed, trailing `?`, `!` and `.` dropped. */
export function normalise(q: string): string {
  return q
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, ' ')
    .replace(/[\s?!.]+$/u, '')
    .trim();
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** An alternation of phrases (longest first; spaces match any whitespace), for use inside a larger pattern. */
export function alternation(phrases: Iterable<string>): string {
  const list = [...new Set(phrases)].filter((p) => p !== '').sort((a, b) => b.length - a.length);
  if (list.length === 0) return '(?!)';
  return `(?:${list.map((p) => escapeRegExp(p).replace(/ /g, '\\s+')).join('|')})`;
}

/**
 * Whole-string match of one of the phrases, lowercased (the text as given: a query's normalised
 * text is lower case). A text longer than every phrase, or starting with an ASCII character no
 * phrase starts with, is refused without the set: most queries reach a dozen of these, and a
 * look-up first hashes the whole text.
 */
export function phraseSet(phrases: Iterable<string>): (text: string) => boolean {
  const set = new Set([...phrases].map((p) => p.toLowerCase()));
  let longest = 0;
  const firsts = new Uint8Array(128);
  for (const phrase of set) {
    longest = Math.max(longest, phrase.length);
    const code = phrase.charCodeAt(0);
    if (code < 128) firsts[code] = 1;
  }
  return (text) => {
    if (text.length > longest) return false;
    // An empty text's code is NaN: it goes to the set (as does a first character beyond ASCII).
    const code = text.charCodeAt(0);
    return !(code < 128 && firsts[code] === 0) && set.has(text);
  };
}

/** Every language's list of one vocabulary field, merged (detection does not depend on `lang`). */
export function allLanguages<T, K extends keyof T>(
  table: Record<string, T>,
  key: K,
): T[K] extends readonly (infer E)[] ? E[] : never {
  const out: unknown[] = [];
  for (const lang of Object.values(table)) out.push(...(lang[key] as unknown as unknown[]));
  return out as never;
}

/** Merged maps of every language (later languages do not override earlier ones). */
export function allLanguageMaps<T, K extends keyof T>(table: Record<string, T>, key: K): T[K] {
  const out: Record<string, unknown> = {};
  for (const lang of Object.values(table)) {
    for (const [k, v] of Object.entries(lang[key] as Record<string, unknown>)) if (!(k in out)) out[k] = v;
  }
  return out as T[K];
}

/** Thousands separators on the integer part of a plain decimal string: "1234567.5" → "1,234,567.5". */
export function groupDigits(plain: string): string {
  const negative = plain.startsWith('-');
  const body = negative ? plain.slice(1) : plain;
  const [int = '', frac] = body.split('.');
  return (negative ? '-' : '') + int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac ? `.${frac}` : '');
}

/** One or more ASCII digits and nothing else. */
export function isAsciiDigits(s: string): boolean {
  return /^[0-9]+$/.test(s);
}

/** A plain (non-exponent) decimal string of `x` rounded to `sig` significant digits, trailing zeros dropped. */
function plainDecimal(x: number, sig: number): string {
  if (x === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(x)));
  const decimals = Math.max(0, Math.min(100, sig - 1 - magnitude));
  let s = x.toFixed(decimals);
  if (s.includes('.')) s = s.slice(0, withoutTrailingZeros(s));
  return s === '-0' ? '0' : s;
}

/** The length of a decimal string with a point once its trailing zeros, then a trailing point, are dropped. */
function withoutTrailingZeros(s: string): number {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 48) end--;
  return end > 0 && s.charCodeAt(end - 1) === 46 ? end - 1 : end;
}

/**
 * A number for people: up to `sig` significant digits (integer digits are
 * never dropped below 1e21), thousands separators, no trailing zeros;
 * scientific notation for very large or very small magnitudes.
 */
export function formatNumber(x: number, sig = 12): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const abs = Math.abs(x);
  if (abs >= 1e21 || abs < 1e-9) {
    const [mant = '', exp = ''] = x.toExponential(Math.max(0, sig - 1)).split('e');
    const m = mant.includes('.') ? mant.replace(/0+$/, '').replace(/\.$/, '') : mant;
    return `${m}e${exp}`;
  }
  if (abs >= 10 ** sig) return groupDigits(Math.round(x).toFixed(0));
  return groupDigits(plainDecimal(x, sig));
}

/** `x` rounded to `sig` significant digits, as a number. */
export function roundSignificant(x: number, sig: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(sig));
}

/** Counts code points (Python's len()). */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Title Case for place names typed in lower case: "new york" → "New York". */
export function titleCase(s: string): string {
  return s.replace(/(^|[\s\-'(/])(\p{L})/gu, (_, sep: string, ch: string) => sep + ch.toUpperCase());
}

/**
 * The ASCII characters a phrase of `phrases` can start (or end) with in a case-insensitive Unicode
 * expression of `alternation`: a table indexed by character code, or null when a phrase starts (or
 * ends) with a space (written `\s+`, so any space may stand there).
 */
function asciiAtEnd(phrases: Iterable<string>, end: 'first' | 'last'): Uint8Array | null {
  const points = new Set<string>();
  for (const phrase of phrases) {
    if (phrase === '') continue;
    const all = [...phrase];
    points.add(end === 'first' ? all[0]! : all[all.length - 1]!);
  }
  const table = new Uint8Array(128);
  for (const point of points) {
    if (/\s/u.test(point)) return null;
    // Asked of the expression engine itself: "K" also matches the Kelvin sign, "s" the long s.
    const one = new RegExp(`^${escapeRegExp(point)}$`, 'iu');
    for (let code = 0; code < 128; code++) if (one.test(String.fromCharCode(code))) table[code] = 1;
  }
  return table;
}

/*
 * The tests and matchers below refuse at once a query whose first (or last) character is an ASCII one
 * that no phrase starts (or ends) with: the expression could not match it. Over twenty handlers try one or
 * two of them on each query that reaches them, and most queries start with a digit or end with one
 * ("17 * 7 + 3", "md5 hello 17"), which no phrase does. Other characters (and an empty query) go to
 * the expression.
 */

/**
 * Whether `q` may start with one of `phrases` as an expression written with `alternation` (or the
 * like: phrases escaped, spaces as `\s+`) reads them, case-insensitive or not: false only when its
 * first character is an ASCII one that no phrase can start with.
 */
export function mayStartWith(phrases: Iterable<string>): (q: string) => boolean {
  const starts = asciiAtEnd(phrases, 'first');
  if (starts === null) return () => true;
  return (q) => {
    const code = q.charCodeAt(0);
    return !(code < 128 && starts[code] === 0);
  };
}

/** Whether `q` may end with one of `phrases` (as mayStartWith, at the other end). */
export function mayEndWith(phrases: Iterable<string>): (q: string) => boolean {
  const ends = asciiAtEnd(phrases, 'last');
  if (ends === null) return () => true;
  return (q) => {
    const code = q.charCodeAt(q.length - 1);
    return !(code < 128 && ends[code] === 0);
  };
}

/** A matcher for "<prefix> <rest>": returns the rest as typed (original case), or null. */
export function prefixMatcher(prefixes: Iterable<string>): (q: string) => string | null {
  const list = [...prefixes];
  const re = new RegExp(`^${alternation(list)}\\s+(.+)$`, 'isu');
  const mayStart = mayStartWith(list);
  return (q) => {
    if (!mayStart(q)) return null;
    const m = re.exec(q);
    return m ? m[1]!.trim() : null;
  };
}

/** A matcher for "<rest> <suffix>": returns the rest as typed (original case), or null. */
export function suffixMatcher(suffixes: Iterable<string>): (q: string) => string | null {
  const list = [...suffixes];
  const re = new RegExp(`^(.+?)\\s+${alternation(list)}$`, 'isu');
  const mayEnd = mayEndWith(list);
  return (q) => {
    if (!mayEnd(q)) return null;
    const m = re.exec(q);
    return m ? m[1]!.trim() : null;
  };
}

/** Drops one pair of matching quotes around a payload: `"hello world"` → `hello world`. */
export function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2) {
    const first = t[0];
    const last = t[t.length - 1];
    if ((first === '"' && last === '"') || (first === "'" && last === "'") || (first === '“' && last === '”')) {
      return t.slice(1, -1);
    }
  }
  return t;
}

/** Words separated by single spaces, none at either end. */
const SINGLE_SPACED = /^\S+(?: \S+)*$/;

/** A conversion query with its arrow or equals sign spaced (`->`, `→` written as `->`, `=`) and runs of space collapsed. */
export function spaceArrows(text: string): string {
  // The usual query (normalised, no arrow or equals sign) is returned as it is: three replaces that
  // change nothing cost more than the rest of a rejection (currency and units both ask).
  if (!text.includes('=') && !text.includes('→') && !text.includes('->') && SINGLE_SPACED.test(text)) return text;
  return text
    .replace(/\s*(->|→|=)\s*/g, ' $1 ')
    .replace(/→/g, '->')
    .replace(/\s+/g, ' ')
    .trim();
}
