import { describe, expect, it } from 'vitest';
import { publishedOf } from '../../src/routes/tavily/answers.js';
import { markdownImages } from '../../src/routes/tavily/extract.js';
import { CHUNK_MAX, chunksOf, relevantChunks } from '../../src/search/relevant-chunks.js';

describe('chunksOf', () => {
  it('keeps paragraphs as chunks and cuts a long one at sentence ends, none over 500 characters', () => {
    const sentence = 'The night train leaves Zurich at nine and reaches Ljubljana by morning. ';
    const long = sentence.repeat(20).trim();
    const chunks = chunksOf(`# Title\n\nA short paragraph.\n\n${long}`);
    expect(chunks.slice(0, 2)).toEqual(['# Title', 'A short paragraph.']);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(CHUNK_MAX);
    for (const chunk of chunks.slice(2)) expect(chunk.endsWith('morning.')).toBe(true);
  });

  it('cuts a sentence longer than a chunk at spaces, never inside a word', () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i}x`);
    const chunks = chunksOf(words.join(' '));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(CHUNK_MAX);
    expect(chunks.join(' ').split(' ')).toEqual(words);
  });

  it('cuts Japanese text at its full stops, which have no space after them', () => {
    const sentence = '夜行列車がアルプスに戻ってくる。';
    const chunks = chunksOf(sentence.repeat(80));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_MAX);
      expect(chunk.endsWith('。')).toBe(true);
    }
  });

  it('cuts a run without spaces at the limit', () => {
    const chunks = chunksOf('x'.repeat(1200));
    expect(chunks.map((c) => c.length)).toEqual([500, 500, 200]);
  });
});

describe('relevantChunks', () => {
  const page = [
    'Trains in Europe are coming back.',
    'Sleeper cars need new rolling stock, and the operators order it.',
    'The sleeper from Vienna to Paris runs three times a week.',
    'Tickets are sold online.',
  ].join('\n\n');

  it('ranks the chunks holding the rarer query words first, joined as Tavily joins them', () => {
    expect(relevantChunks(page, 'Vienna sleeper', 2)).toBe(
      'The sleeper from Vienna to Paris runs three times a week. [...] Sleeper cars need new rolling stock, and the operators order it.',
    );
  });

  it('gives the first chunks of a page without a word of the query', () => {
    expect(relevantChunks(page, 'submarine', 2)).toBe(
      'Trains in Europe are coming back. [...] Sleeper cars need new rolling stock, and the operators order it.',
    );
  });

  it('answers an empty page as empty', () => {
    expect(relevantChunks('  \n\n ', 'trains', 3)).toBe('');
  });
});

describe('publishedOf', () => {
  it('reads ISO dates and the engines\' "Month D, YYYY", not relative ages', () => {
    expect(publishedOf('2025-03-14T10:00:00Z')).toBe('2025-03-14T10:00:00Z');
    expect(publishedOf('March 14, 2025')).toBe('2025-03-14');
    expect(publishedOf('February 30, 2025')).toBeNull();
    expect(publishedOf('2 hours ago')).toBeNull();
    expect(publishedOf('')).toBeNull();
  });
});

describe('markdownImages', () => {
  it('lists the absolute image URLs of markdown once each, in order', () => {
    const md =
      '![a](https://x.example/a.png) text ![b](<https://x.example/b.jpg> "B") ![a](https://x.example/a.png) ![c](data:x)';
    expect(markdownImages(md)).toEqual(['https://x.example/a.png', 'https://x.example/b.jpg']);
  });
});
