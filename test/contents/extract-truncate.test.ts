import { describe, expect, it } from 'vitest';
import { truncateContent } from '../../src/contents/extract/index.js';

describe('truncateContent', () => {
  it('leaves content within the limit whole', () => {
    expect(truncateContent('Short text.', 100)).toEqual({ content: 'Short text.', truncated: false });
  });

  it('cuts at the last paragraph break when one is near the limit', () => {
    const content = `${'a'.repeat(80)}.\n\n${'b'.repeat(30)} more words here.`;
    const out = truncateContent(content, 100);
    expect(out).toEqual({ content: `${'a'.repeat(80)}.`, truncated: true });
  });

  it('cuts at the end of a sentence when no paragraph break is near', () => {
    const content = `${'x'.repeat(20)}\n\n${'word '.repeat(12)}ends here. Then another sentence goes on past the limit.`;
    const out = truncateContent(content, 100);
    expect(out.truncated).toBe(true);
    expect(out.content.endsWith('ends here.')).toBe(true);
    expect(out.content.length).toBeLessThanOrEqual(100);
  });

  it('cuts between words when there is no sentence end near the limit', () => {
    const content = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau';
    const out = truncateContent(content, 50);
    expect(out.truncated).toBe(true);
    expect(out.content.length).toBeLessThanOrEqual(50);
    expect(content.startsWith(out.content)).toBe(true);
    expect(content[out.content.length]).toBe(' ');
  });

  it('is never over the limit, even in one long word, and never splits a surrogate pair', () => {
    const content = `${'a'.repeat(9)}😀${'b'.repeat(40)}`;
    const out = truncateContent(content, 10);
    expect(out).toEqual({ content: 'a'.repeat(9), truncated: true });
    for (const max of [1, 7, 33, 99]) {
      expect(truncateContent('🙂'.repeat(100), max).content.length).toBeLessThanOrEqual(max);
    }
  });
});
