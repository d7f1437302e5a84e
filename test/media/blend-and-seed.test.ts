import { describe, expect, it } from 'vitest';
import { interleave } from '../../src/search/media.js';
import { cleanCaption, similarSeed } from '../../src/search/queries.js';

describe('interleave (the one blend of images, news and videos)', () => {
  it('takes one item from each list in turn, each list keeping its order', () => {
    expect(interleave([['a1', 'a2', 'a3'], ['b1'], ['c1', 'c2']])).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
  });

  it('skips empty lists and answers [] for none', () => {
    expect(interleave([[], ['b1', 'b2'], []])).toEqual(['b1', 'b2']);
    expect(interleave([])).toEqual([]);
    expect(interleave([[], []])).toEqual([]);
  });

  it('keeps duplicates (no dedup across providers)', () => {
    expect(interleave([['x', 'y'], ['x']])).toEqual(['x', 'x', 'y']);
  });
});

describe('similar-images seed', () => {
  it('drops one trailing " <separator> <source>" segment for every separator', () => {
    const cases: [string, string][] = [
      ['Eiffel Tower | Britannica', 'Eiffel Tower'],
      ['Eiffel Tower · Britannica', 'Eiffel Tower'],
      ['Eiffel Tower – Britannica', 'Eiffel Tower'],
      ['Eiffel Tower — Britannica', 'Eiffel Tower'],
      ['Golden Retriever - American Kennel Club', 'Golden Retriever'],
    ];
    for (const [caption, seed] of cases) expect(cleanCaption(caption), caption).toBe(seed);
  });

  it('needs whitespace on both sides of the separator', () => {
    expect(cleanCaption('Spider-Man')).toBe('Spider-Man');
    expect(cleanCaption('Spider -Man')).toBe('Spider -Man');
    expect(cleanCaption('Spider- Man')).toBe('Spider- Man');
    expect(cleanCaption('AC|DC live')).toBe('AC|DC live');
  });

  it('collapses whitespace first, then drops only the last short segment', () => {
    expect(cleanCaption('  New   York -\tBrooklyn   Bridge\n - Wikipedia ')).toBe('New York - Brooklyn Bridge');
    expect(cleanCaption('a - b - c')).toBe('a - b');
  });

  it('keeps a trailing segment of more than 40 characters, drops one of exactly 40', () => {
    const forty = 'x'.repeat(40);
    expect(cleanCaption(`Subject - ${forty}`)).toBe('Subject');
    expect(cleanCaption(`Subject - ${forty}y`)).toBe(`Subject - ${forty}y`);
    expect(cleanCaption(`Subject - ${'é'.repeat(40)}`)).toBe('Subject');
  });

  it('falls back to the collapsed caption when the seed would be shorter than 2 characters', () => {
    expect(cleanCaption('A - Some Site')).toBe('A - Some Site');
    expect(cleanCaption('AB - Some Site')).toBe('AB');
    expect(cleanCaption(' -  x')).toBe('- x');
    expect(cleanCaption('x')).toBe('x');
  });

  it('uses the caption when there is one, else the collapsed query, else ""', () => {
    expect(similarSeed('Red fox | Flickr', 'foxes')).toBe('Red fox');
    expect(similarSeed('', '  arctic   fox ')).toBe('arctic fox');
    expect(similarSeed('   ', 'fox')).toBe('fox');
    expect(similarSeed('', '')).toBe('');
  });
});
