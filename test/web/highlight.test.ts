import { describe, expect, it } from 'vitest';
import { createHighlighter, highlight, queryWords } from '../../src/search/highlight.js';

describe('query words', () => {
  it('are runs of word characters of at least 2 characters, deduplicated case-insensitively', () => {
    expect(queryWords('Rust rust, a RUST borrow-checker x 42')).toEqual(['Rust', 'borrow', 'checker', '42']);
    expect(queryWords('  ')).toEqual([]);
    expect(queryWords('東京 café')).toEqual(['東京', 'café']);
  });
});

describe('description highlighting', () => {
  it('wraps whole-word, case-insensitive matches and keeps the text casing', () => {
    expect(highlight('The Rust book about rust and RUST.', 'rust')).toBe(
      'The <strong>Rust</strong> book about <strong>rust</strong> and <strong>RUST</strong>.',
    );
  });

  it('never matches inside longer words', () => {
    expect(highlight('trust the rustacean; rust_lang; rust', 'rust')).toBe(
      'trust the rustacean; rust_lang; <strong>rust</strong>',
    );
  });

  it('ignores one-character query words', () => {
    expect(highlight('a b c in a row', 'a in')).toBe('a b c <strong>in</strong> a row');
  });

  it('is Unicode-aware: accented words, non-Latin scripts and letters next to a match', () => {
    expect(highlight('Le café est ouvert; cafés fermés', 'CAFÉ')).toBe(
      'Le <strong>café</strong> est ouvert; cafés fermés',
    );
    expect(highlight('Привет мир, приветствие', 'привет')).toBe('<strong>Привет</strong> мир, приветствие');
    expect(highlight('東京 タワー', '東京')).toBe('<strong>東京</strong> タワー');
    // "é" is a word character, so "caf" is not a whole word inside "café"
    expect(highlight('café', 'caf')).toBe('café');
  });

  it('never touches HTML tags or their attributes', () => {
    expect(highlight('<a href="https://rust.example" title="rust">rust</a>', 'rust')).toBe(
      '<a href="https://rust.example" title="rust"><strong>rust</strong></a>',
    );
    expect(highlight('<b>bold</b> b', 'bold b')).toBe('<b><strong>bold</strong></b> b');
  });

  it('never touches character references', () => {
    expect(highlight('Tom &amp; Jerry &#38; amp &#x26; x26', 'amp x26 38')).toBe(
      'Tom &amp; Jerry &#38; <strong>amp</strong> &#x26; <strong>x26</strong>',
    );
    expect(highlight('&quot;quot&quot;', 'quot')).toBe('&quot;<strong>quot</strong>&quot;');
  });

  it('leaves text that already has <strong> markup as it is', () => {
    const text = 'Already <STRONG>rust</STRONG> highlighted rust';
    expect(highlight(text, 'rust highlighted')).toBe(text);
  });

  it('treats regex metacharacters in the query as plain text and empty input as empty', () => {
    expect(highlight('c++ and c# (rust)', '(rust) .* c++')).toBe('c++ and c# (<strong>rust</strong>)');
    expect(highlight('', 'rust')).toBe('');
    expect(highlight('nothing here', '!!!')).toBe('nothing here');
  });

  it('prefers the longer of two query words starting at the same place', () => {
    expect(highlight('new york and new', 'new new_york york')).toBe(
      '<strong>new</strong> <strong>york</strong> and <strong>new</strong>',
    );
    expect(highlight('new_york', 'new new_york')).toBe('<strong>new_york</strong>');
  });

  it('a highlighter built once gives the same answers on many texts', () => {
    const hl = createHighlighter('rust');
    expect(hl('rust')).toBe('<strong>rust</strong>');
    expect(hl('rust')).toBe('<strong>rust</strong>');
    expect(hl('no')).toBe('no');
  });
});
