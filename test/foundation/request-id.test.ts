import { describe, expect, it } from 'vitest';
import { createRequestIds } from '../../src/request-id.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('are shaped like UUIDs and never repeat within a process', () => {
    const next = createRequestIds();
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = next();
      expect(id).toMatch(UUID_SHAPE);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
  });

  it('count up from their start, carrying into the upper half and going round after 2^48 - 1', () => {
    const counters = (start: number, n: number) => {
      const next = createRequestIds(start);
      return Array.from({ length: n }, () => next().slice(24));
    };
    expect(counters(0, 2)).toEqual(['000000000000', '000000000001']);
    expect(counters(2 ** 24 - 2, 3)).toEqual(['000000fffffe', '000000ffffff', '000001000000']);
    expect(counters(0xabcdefffffff, 2)).toEqual(['abcdefffffff', 'abcdf0000000']);
    expect(counters(2 ** 48 - 2, 3)).toEqual(['fffffffffffe', 'ffffffffffff', '000000000000']);
  });

  it('differ between two sources (two processes) in their random part', () => {
    const a = createRequestIds()();
    const b = createRequestIds()();
    expect(a.slice(0, 24)).not.toBe(b.slice(0, 24));
  });
});
