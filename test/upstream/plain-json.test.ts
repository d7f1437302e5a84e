import { describe, expect, it } from 'vitest';
import { plainJson } from '../../src/upstream/plain-json.js';

/* Values the shared cache level may keep as JSON (src/upstream/plain-json.ts): those that come back as they were. */

describe('plain JSON', () => {
  it('is the JSON text of plain data, which parses back to an equal value', () => {
    const value = { title: 'a', n: 2.5, ok: true, none: null, list: [1, 'x', { deep: [] }], gone: undefined };
    const text = plainJson(value);
    expect(text).toBeDefined();
    expect(JSON.parse(text!)).toEqual(value);
  });

  it('refuses what would come back otherwise: a Date, a Map, a class instance, a hole or NaN in an array', () => {
    class Place {
      constructor(readonly name: string) {}
    }
    expect(plainJson({ at: new Date(0) })).toBeUndefined();
    expect(plainJson({ index: new Map([['a', 1]]) })).toBeUndefined();
    expect(plainJson([new Place('Paris')])).toBeUndefined();
    expect(plainJson([1, undefined])).toBeUndefined();
    expect(plainJson({ n: Number.NaN })).toBeUndefined();
    expect(plainJson({ f: () => 1 })).toBeUndefined();
  });
});
