import { describe, expect, it } from 'vitest';
import { scorePages, shingleMatching, tokenize } from '../../bench/contents-score.js';

describe("the contents bench's scoring (scrapinghub's evaluate.py)", () => {
  it("tokenizes as Python's \\w+ does: letters, numbers and underscores of any script", () => {
    expect(tokenize('Größe: 12,5 km — naïve_test 東京タワー!')).toEqual([
      'Größe',
      '12',
      '5',
      'km',
      'naïve_test',
      '東京タワー',
    ]);
  });

  it('counts word 4-gram shingles, normalised by their sum', () => {
    // Truth: a b c d e (shingles abcd, bcde); prediction: a b c d x (abcd, bcdx).
    expect(shingleMatching('a b c d e', 'a b c d x')).toEqual({ tp: 1 / 3, fp: 1 / 3, fn: 1 / 3 });
    // Shorter than four tokens: one shingle of all of them.
    expect(shingleMatching('a b', 'a b')).toEqual({ tp: 1, fp: 0, fn: 0 });
  });

  it('averages precision over pages that predicted something and recall over pages with a truth', () => {
    const scores = scorePages([
      { truth: 'a b c d e', prediction: 'a b c d x' },
      { truth: 'one two three four', prediction: '' },
    ]);
    expect(scores.precision).toBeCloseTo(0.5);
    expect(scores.recall).toBeCloseTo(0.25);
    expect(scores.f1).toBeCloseTo((2 * 0.5 * 0.25) / 0.75);
    expect(scores.accuracy).toBe(0);
  });
});
