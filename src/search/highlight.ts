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

/**
 * One static scanner for every query: a tag or a character reference (group
 * 1, copied through), or a maximal run of word characters (a whole word by
 * construction). Each word is looked up, case-folded, in the query's set.
 */
const TOKEN = /(<[^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);)|[\p{L}\p{M}\p{N}_]+/gu;

/** Builds the highlighter for one query (apply it to every description). */
export function createHighlighter(query: string): Highlighter {
  const words = new Set(queryWords(query).map((w) => w.toLowerCase()));
  if (words.size === 0) return identity;
  return (text) => {
    if (!text || HAS_STRONG.test(text)) return text;
    let out = '';
    let last = 0;
    for (const m of text.matchAll(TOKEN)) {
      if (m[1] !== undefined || !words.has(m[0].toLowerCase())) continue;
      const at = m.index;
      out += `${text.slice(last, at)}<strong>${m[0]}</strong>`;
      last = at + m[0].length;
    }
    return last === 0 ? text : out + text.slice(last);
  };
}

/** One-off highlighting (tests and callers with a single text). */
export function highlight(text: string, query: string): string {
  return createHighlighter(query)(text);
}
