/*
 * The scoring of scrapinghub/article-extraction-benchmark's evaluate.py, in TypeScript: each page's
 * true and predicted articleBody cut into word 4-gram shingles (tokens are runs of \w, Python's
 * Unicode word characters), true/false positives and false negatives counted over the shingles and
 * normalised by their sum so that long pages weigh no more than short ones; precision is the mean
 * over the pages that predicted something, recall over those with something to find, and F1 is
 * computed from those two means (not the mean of per-page F1s).
 */

export interface ShingleCounts {
  tp: number;
  fp: number;
  fn: number;
}

export interface Scores {
  f1: number;
  precision: number;
  recall: number;
  /** Share of pages whose tokens equal the truth's exactly. */
  accuracy: number;
}

// Python's \w on str: letters, numbers (Nd, Nl, No) and the underscore; combining marks are not in it.
const TOKEN = /[\p{L}\p{N}_]+/gu;

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

function shingles(text: string, n = 4): Map<string, number> {
  const tokens = tokenize(text);
  const counts = new Map<string, number>();
  // As evaluate.py: a text shorter than n tokens is one shingle of all its tokens; none is empty.
  const last = Math.max(1, tokens.length - n + 1);
  for (let i = 0; i < last; i++) {
    const shingle = tokens.slice(i, i + n);
    if (shingle.length === 0) continue;
    const key = shingle.join('\u0000');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export function shingleMatching(truth: string, prediction: string): ShingleCounts {
  const t = shingles(truth);
  const p = shingles(prediction);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const key of new Set([...t.keys(), ...p.keys()])) {
    const tc = t.get(key) ?? 0;
    const pc = p.get(key) ?? 0;
    tp += Math.min(tc, pc);
    fp += Math.max(0, pc - tc);
    fn += Math.max(0, tc - pc);
  }
  const sum = tp + fp + fn;
  return sum > 0 ? { tp: tp / sum, fp: fp / sum, fn: fn / sum } : { tp, fp, fn };
}

function precisionOf({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fp === 0) return 0;
  return tp / (tp + fp);
}

function recallOf({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fn === 0) return 0;
  return tp / (tp + fn);
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function scorePages(pages: { truth: string; prediction: string }[]): Scores {
  const counts = pages.map((p) => shingleMatching(p.truth, p.prediction));
  const precision = mean(counts.filter((c) => c.tp + c.fp > 0).map(precisionOf));
  const recall = mean(counts.filter((c) => c.tp + c.fn > 0).map(recallOf));
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const accuracy = mean(pages.map((p) => (same(tokenize(p.truth), tokenize(p.prediction)) ? 1 : 0)));
  return { f1, precision, recall, accuracy };
}
