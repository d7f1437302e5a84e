/*
 * Small text helpers shared by the instant-answer handlers: query
 * normalisation, phrase lists compiled to regular expressions, and number
 * formatting for people.
 */

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

/** Whole-string match of one of the phrases, lowercased (the text as given: a query's normalised text is lower case). */
export function phraseSet(phrases: Iterable<string>): (text: string) => boolean {
  const set = new Set([...phrases].map((p) => p.toLowerCase()));
  return (text) => set.has(text);
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
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s === '-0' ? '0' : s;
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

/** A matcher for "<prefix> <rest>": returns the rest as typed (original case), or null. */
export function prefixMatcher(prefixes: Iterable<string>): (q: string) => string | null {
  const re = new RegExp(`^${alternation(prefixes)}\\s+(.+)$`, 'isu');
  return (q) => {
    const m = re.exec(q);
    return m ? m[1]!.trim() : null;
  };
}

/** A matcher for "<rest> <suffix>": returns the rest as typed (original case), or null. */
export function suffixMatcher(suffixes: Iterable<string>): (q: string) => string | null {
  const re = new RegExp(`^(.+?)\\s+${alternation(suffixes)}$`, 'isu');
  return (q) => {
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

/** A conversion query with its arrow or equals sign spaced (`->`, `→` written as `->`, `=`) and runs of space collapsed. */
export function spaceArrows(text: string): string {
  return text
    .replace(/\s*(->|→|=)\s*/g, ' $1 ')
    .replace(/→/g, '->')
    .replace(/\s+/g, ' ')
    .trim();
}
