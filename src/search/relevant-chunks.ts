import { queryWords } from './highlight.js';

/*
 * The passages of a page most relevant to a query (Tavily's extract with `query` and
 * `chunks_per_source`): a plain lexical ranking, no model.
 *
 * 1. The page is cut into chunks of at most CHUNK_MAX characters: its paragraphs (blank-line
 *    separated); a longer paragraph is cut at sentence ends, a sentence longer still at a space.
 * 2. Each chunk is scored with BM25 (k1 = 1.2, b = 0.75), the chunks of the page being the
 *    collection: the query's distinct words (case-insensitive, Unicode word characters, two or
 *    more), each weighted by how rare it is among the page's chunks, with the chunk's length
 *    normalised against the page's average.
 * 3. The `count` best are kept, best first (ties: page order), joined with " [...] " as Tavily
 *    joins its chunks. A page with no word of the query gives its first chunks.
 */

export const CHUNK_MAX = 500;
export const CHUNK_SEPARATOR = ' [...] ';
const K1 = 1.2;
const B = 0.75;
const WORD = /[\p{L}\p{M}\p{N}_]+/gu;

// A full stop, question or exclamation mark and a space; the ideographic ones need no space.
const SENTENCE_END = /[.!?]["')\]]*\s+|[。！？][」』）]*\s*/gu;
const SPACE = /\s+/gu;

/** The end of the last `boundary` within the first `max` characters of `text`, or -1. */
function lastBoundary(text: string, max: number, boundary: RegExp): number {
  let at = -1;
  for (const m of text.slice(0, max + 1).matchAll(boundary)) {
    if (m.index > 0 && m.index + m[0].length <= max + 1) at = Math.min(max, m.index + m[0].length);
  }
  return at;
}

/** Cuts a paragraph into pieces of at most `max` characters: at sentence ends, else at spaces, else anywhere. */
function cut(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let at = lastBoundary(rest, max, SENTENCE_END);
    if (at <= 0) at = lastBoundary(rest, max, SPACE);
    if (at <= 0) at = max;
    out.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest !== '') out.push(rest);
  return out;
}

/** The page's chunks, in page order. */
export function chunksOf(content: string): string[] {
  const chunks: string[] = [];
  for (const paragraph of content.split(/\n\s*\n/)) {
    const p = paragraph.trim();
    if (p !== '') chunks.push(...cut(p, CHUNK_MAX));
  }
  return chunks;
}

function termCounts(chunk: string): { counts: Map<string, number>; length: number } {
  const counts = new Map<string, number>();
  let length = 0;
  for (const m of chunk.matchAll(WORD)) {
    const w = m[0].toLowerCase();
    counts.set(w, (counts.get(w) ?? 0) + 1);
    length++;
  }
  return { counts, length };
}

/** The `count` chunks of `content` most relevant to `query`, best first, joined as Tavily joins them. */
export function relevantChunks(content: string, query: string, count: number): string {
  const chunks = chunksOf(content);
  if (chunks.length === 0) return '';
  const terms = queryWords(query).map((w) => w.toLowerCase());
  const docs = chunks.map(termCounts);
  const average = docs.reduce((n, d) => n + d.length, 0) / docs.length || 1;
  const idf = new Map<string, number>();
  for (const term of terms) {
    const df = docs.filter((d) => d.counts.has(term)).length;
    idf.set(term, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5)));
  }
  const scored = docs.map((d, i) => {
    let score = 0;
    for (const term of terms) {
      const tf = d.counts.get(term) ?? 0;
      if (tf === 0) continue;
      score += (idf.get(term)! * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * d.length) / average));
    }
    return { i, score };
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  return scored
    .slice(0, count)
    .map((s) => chunks[s.i]!)
    .join(CHUNK_SEPARATOR);
}
