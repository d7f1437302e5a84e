/*
 * Query-term highlighting of result descriptions (reference section 5, web).
 *
 * Every whole-word, case-insensitive occurrence of each distinct query word
 * (a run of word characters, at least 2 long) is wrapped in <strong>…</strong>,
 * keeping the text's own casing. Words are Unicode-aware: letters, combining
 * marks, digits and `_` are word characters, so "café" or "東京" are whole words
 * and "rust" does not match inside "rustacean" or "trust". Matching never
 * happens inside an HTML tag (`<a href="rust">`) or a character reference
 * (`&amp;`, `&#38;`, `&#x26;`), which are copied through untouched, so an HTML
 * fragment stays well-formed. Text that already carries `<strong` markup (Brave
 * highlights its own snippets) is left as it is. The text is otherwise passed
 * through unchanged (it is an HTML fragment, as upstreams send it).
 */

const WORD = /[\p{L}\p{M}\p{N}_]+/gu;
const HAS_STRONG = /<strong/i;
const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** Distinct query words (case-insensitively), in query order, each at least 2 characters. */
export function queryWords(query: string): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const m of query.matchAll(WORD)) {
    const w = m[0];
    if (w.length < 2 || (w.length === 2 && [...w].length < 2)) continue;
    const folded = w.toLowerCase();
    if (seen.has(folded)) continue;
    seen.add(folded);
    words.push(w);
  }
  return words;
}

export type Highlighter = (text: string) => string;

const identity: Highlighter = (text) => text;

/** Builds the highlighter for one query (compile once, apply to every description). */
export function createHighlighter(query: string): Highlighter {
  const words = queryWords(query);
  if (words.length === 0) return identity;
  // Longest first, so an alternative never shadows a longer one at the same position.
  const alternatives = words
    .sort((a, b) => b.length - a.length)
    .map((w) => w.replace(REGEX_SPECIAL, '\\$&'))
    .join('|');
  const pattern = new RegExp(
    `(<[^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);)|(?<![\\p{L}\\p{M}\\p{N}_])(?:${alternatives})(?![\\p{L}\\p{M}\\p{N}_])`,
    'giu',
  );
  const replace = (match: string, skipped: string | undefined) => (skipped ? match : `<strong>${match}</strong>`);
  return (text) => {
    if (!text || HAS_STRONG.test(text)) return text;
    pattern.lastIndex = 0;
    return text.replace(pattern, replace);
  };
}

/** One-off highlighting (tests and callers with a single text). */
export function highlight(text: string, query: string): string {
  return createHighlighter(query)(text);
}
