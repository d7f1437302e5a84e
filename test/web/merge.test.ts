import { describe, expect, it } from 'vitest';
import { correctionOf, type EngineResult, mergeResults } from '../../src/search/merge.js';

const r = (url: string, extra: Partial<EngineResult> = {}): EngineResult => ({
  title: `T ${url}`,
  url,
  description: '',
  display_url: '',
  favicon_url: '',
  age: '',
  sitelinks: [],
  ...extra,
});

describe('reciprocal rank fusion', () => {
  it('interleaves unique results engine by engine (ties keep first-seen order)', () => {
    const merged = mergeResults([
      { engine: 'provider_01', results: [r('b1'), r('b2')] },
      { engine: 'provider_02', results: [r('m1'), r('m2')] },
      { engine: 'provider_03', results: [r('g1')] },
    ]);
    expect(merged.map((x) => x.url)).toEqual(['b1', 'm1', 'g1', 'b2', 'm2']);
    expect(merged.map((x) => x.source)).toEqual([
      'provider_01',
      'provider_02',
      'provider_03',
      'provider_01',
      'provider_02',
    ]);
    expect(merged.map((x) => x.source_label)).toEqual(['', 'Mojeek', 'Marginalia', '', 'Mojeek']);
  });

  it('ranks a result two engines agree on above every single-engine result', () => {
    const merged = mergeResults([
      { engine: 'provider_01', results: [r('a'), r('b'), r('shared')] },
      { engine: 'provider_02', results: [r('c'), r('d'), r('shared')] },
    ]);
    // 1/62 + 1/62 > 1/60
    expect(merged[0]).toMatchObject({ url: 'shared', source: 'both', source_label: 'Mojeek' });
    expect(merged.map((x) => x.url)).toEqual(['shared', 'a', 'c', 'b', 'd']);
  });

  it('labels 3 or more engines "all" and names every engine but provider_01, in engine order', () => {
    const merged = mergeResults([
      { engine: 'provider_01', results: [r('x')] },
      { engine: 'provider_02', results: [r('x')] },
      { engine: 'provider_03', results: [r('x')] },
      { engine: 'provider_04', results: [r('x'), r('y')] },
    ]);
    expect(merged[0]).toMatchObject({ url: 'x', source: 'all', source_label: 'Mojeek · Marginalia · Staan' });
    const noBrave = mergeResults([
      { engine: 'provider_02', results: [r('x')] },
      { engine: 'provider_04', results: [r('x')] },
    ]);
    expect(noBrave[0]).toMatchObject({ source: 'both', source_label: 'Mojeek · Staan' });
    const three = mergeResults([
      { engine: 'provider_02', results: [r('x')] },
      { engine: 'provider_03', results: [r('x')] },
      { engine: 'provider_04', results: [r('x')] },
    ]);
    expect(three[0]).toMatchObject({ source: 'all', source_label: 'Mojeek · Marginalia · Staan' });
  });

  it('keeps the first-seen copy of a duplicate (fields from the earlier engine)', () => {
    const merged = mergeResults([
      { engine: 'provider_01', results: [r('u', { title: 'Brave title', age: '2 days ago', favicon_url: 'f' })] },
      { engine: 'provider_02', results: [r('u', { title: 'Mojeek title', description: 'm' })] },
    ]);
    expect(merged).toEqual([
      {
        title: 'Brave title',
        url: 'u',
        description: '',
        display_url: '',
        favicon_url: 'f',
        age: '2 days ago',
        source: 'both',
        source_label: 'Mojeek',
        sitelinks: [],
      },
    ]);
  });

  it('uses the exact URL as the duplicate key (scheme, www, trailing slash and case stay distinct)', () => {
    const urls = [
      'https://example.org/a',
      'http://example.org/a',
      'https://www.example.org/a',
      'https://example.org/a/',
      'https://example.org/A',
    ];
    const merged = mergeResults([
      { engine: 'provider_01', results: [r(urls[0]!)] },
      { engine: 'provider_02', results: urls.slice(1).map((u) => r(u)) },
    ]);
    expect(merged).toHaveLength(5);
    expect(merged.every((x) => x.source !== 'both')).toBe(true);
  });

  it('sums the 1/(60 + rank) contributions with ranks from 0', () => {
    // x: ranks 0 and 3 → 1/60 + 1/63; y: rank 0 and 1 → 1/60 + 1/61 (higher)
    const merged = mergeResults([
      { engine: 'provider_01', results: [r('x'), r('y')] },
      { engine: 'provider_02', results: [r('y'), r('p'), r('q'), r('x')] },
    ]);
    expect(merged.map((m) => m.url)).toEqual(['y', 'x', 'p', 'q']);
  });

  it('gives an empty list for no input', () => {
    expect(mergeResults([])).toEqual([]);
  });
});

describe('correction', () => {
  it('is the altered query only when it differs case-insensitively', () => {
    expect(correctionOf('rust borow checker', 'rust borrow checker')).toBe('rust borrow checker');
    expect(correctionOf('Rust', 'rust')).toBe('');
    expect(correctionOf('rust', '')).toBe('');
  });
});
