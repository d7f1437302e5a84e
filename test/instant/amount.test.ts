import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { connectorList, splitsAround } from '../../src/search/instant/amount.js';

/** The splits by words, as the unit and currency handlers first found them: the oracle for the indexOf search. */
function splitsByWords(text: string, connectors: readonly string[]): [string, string][] {
  const words = text.split(' ');
  const out: [string, string][] = [];
  for (let i = 1; i < words.length - 1; i++) {
    for (const connector of connectors) {
      const c = connector.split(' ');
      if (i + c.length > words.length - 1) continue;
      if (c.every((w, k) => words[i + k] === w)) {
        out.push([words.slice(0, i).join(' '), words.slice(i + c.length).join(' ')]);
      }
    }
  }
  return out;
}

// Connectors sharing first words, one inside another ("in" / "in to"), and one that is a word's tail ("to" / "into").
const CONNECTORS = ['to', 'in to', 'in', 'into', 'to the', 'as', 'à'];

describe('splitsAround', () => {
  it('splits around every connector, leftmost first and in the list order at one word', () => {
    const list = connectorList(CONNECTORS);
    expect(splitsAround('10 km to mi', list)).toEqual([['10 km', 'mi']]);
    expect(splitsAround('5 in to the cm', list)).toEqual([
      ['5', 'the cm'],
      ['5', 'to the cm'],
      ['5 in', 'the cm'],
      ['5 in', 'cm'],
    ]);
    expect(splitsAround('a to to b', list)).toEqual([
      ['a', 'to b'],
      ['a to', 'b'],
    ]);
  });

  it('finds no split at either end of the text, nor inside a word', () => {
    const list = connectorList(CONNECTORS);
    expect(splitsAround('to mi', list)).toEqual([]);
    expect(splitsAround('10 km to', list)).toEqual([]);
    expect(splitsAround('10 km into2 mi', list)).toEqual([]);
    expect(splitsAround('tokyo intolerance', list)).toEqual([]);
  });

  it('finds the same splits as splitting the text into words, in the same order, for any text', () => {
    const list = connectorList(CONNECTORS);
    const word = fc.oneof(
      fc.constantFrom('to', 'in', 'into', 'the', 'as', 'à', '10', 'km', 'usd', 'eur', ''),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 9 }), (words) => {
        const text = words.join(' ');
        expect(splitsAround(text, list)).toEqual(splitsByWords(text, CONNECTORS));
      }),
      { numRuns: 5000 },
    );
  });
});
