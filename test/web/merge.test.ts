import { describe, expect, it } from 'vitest';
import { canonicalUrl, correctionOf, type EngineResult, mergeResults } from '../../src/search/merge.js';

const r = (url: string, extra: Partial<EngineResult> = {}): EngineResult => ({
  title: `T ${url}`,
  url,
  description: '',
  display_url: '',
  favicon_url: '',
  age: '',
  published: '',
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
        published: '',
        source: 'both',
        source_label: 'Mojeek',
        sitelinks: [],
      },
    ]);
  });

  it("merges the real pair Marginalia and Brave send for one page (percent-encoded or not), keeping Brave's spelling", () => {
    const brave = 'https://en.wikipedia.org/wiki/Python_(programming_language)';
    const marginalia = 'https://en.wikipedia.org/wiki/Python_%28programming_language%29';
    const merged = mergeResults([
      { engine: 'provider_01', results: [r('https://brave-only.example/'), r(brave)] },
      { engine: 'provider_03', results: [r(marginalia)] },
    ]);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({ url: brave, source: 'both', source_label: 'Marginalia' });
    // Two appearances outrank one at a better rank: that is the agreement RRF rewards.
    expect(merged[1]!.url).toBe('https://brave-only.example/');
  });

  it('merges spellings of one page: http/https, www, a trailing slash, a default port, a fragment, utm_* tags', () => {
    const spellings = [
      'https://example.org/a',
      'http://example.org/a',
      'https://www.example.org/a',
      'https://example.org/a/',
      'https://EXAMPLE.org:443/a',
      'https://example.org/a#section',
      'https://example.org/a?utm_source=news&utm_medium=x',
      'https://example.org/a?fbclid=abc',
    ];
    for (const other of spellings.slice(1)) {
      expect([other, canonicalUrl(other)]).toEqual([other, canonicalUrl(spellings[0]!)]);
      const merged = mergeResults([
        { engine: 'provider_01', results: [r(spellings[0]!)] },
        { engine: 'provider_02', results: [r(other)] },
      ]);
      expect(merged.map((m) => [m.url, m.source])).toEqual([[spellings[0], 'both']]);
    }
  });

  it('normalises percent-encoding both ways: escapes of plain characters decoded, other escapes in upper case', () => {
    expect(canonicalUrl('https://de.wikipedia.org/wiki/Caf%c3%a9')).toBe(
      canonicalUrl('https://de.wikipedia.org/wiki/Café'),
    );
    expect(canonicalUrl('https://example.org/%7Euser/a%2Db')).toBe(canonicalUrl('https://example.org/~user/a-b'));
    expect(canonicalUrl('https://example.org/a b')).toBe(canonicalUrl('https://example.org/a%20b'));
  });

  it('keeps apart what really differs: paths, their case, query strings that matter, an encoded slash, a port', () => {
    const apart = [
      ['https://example.org/a', 'https://example.org/b'],
      ['https://example.org/a', 'https://example.org/A'],
      ['https://example.org/a?id=1', 'https://example.org/a?id=2'],
      ['https://example.org/a?id=1&page=2', 'https://example.org/a?id=1'],
      ['https://example.org/a%2Fb', 'https://example.org/a/b'],
      ['https://example.org/?q=a+b', 'https://example.org/?q=a%2Bb'],
      ['https://example.org:8080/a', 'https://example.org/a'],
      ['https://sub.example.org/a', 'https://example.org/a'],
    ];
    for (const [a, b] of apart) {
      expect([a, b, canonicalUrl(a!) === canonicalUrl(b!)]).toEqual([a, b, false]);
      const merged = mergeResults([
        { engine: 'provider_01', results: [r(a!)] },
        { engine: 'provider_02', results: [r(b!)] },
      ]);
      expect(merged.map((m) => m.url)).toEqual([a, b]);
    }
  });

  it('keeps a string that is not a URL as its own key', () => {
    expect(canonicalUrl('not a url')).toBe('not a url');
    expect(mergeResults([{ engine: 'provider_01', results: [r('x'), r('y'), r('x')] }]).map((m) => m.url)).toEqual([
      'x',
      'y',
    ]);
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
