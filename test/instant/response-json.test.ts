import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instantAnswer, type InstantResponse } from '../../src/search/instant/index.js';
import { instantResponseJson } from '../../src/search/instant/response-json.js';
import type { InstantDeps } from '../../src/search/instant/types.js';
import { CATEGORIES } from '../../src/search/instant/units-data.js';
import { testConfig } from '../helpers/app.js';

/*
 * instantResponseJson writes a unit answer's list of units from JSON made once: its text must be
 * JSON.stringify's, for every unit answer and for every other response.
 */

const deps: InstantDeps = {
  config: testConfig(null),
  upstream: { call: () => Promise.reject(new Error('no upstream')), gather: () => Promise.resolve([]) },
  rates: { current: async () => null, reset() {} },
};

async function response(q: string): Promise<InstantResponse> {
  return { query: q, answer: await instantAnswer(deps, { q, lang: '', ip: '', userAgent: '' }) };
}

describe('instant answers: the JSON of a response', () => {
  it('is JSON.stringify’s text for a conversion between every two units of every category', async () => {
    let unitAnswers = 0;
    for (const category of CATEGORIES) {
      for (const from of category.units) {
        for (const to of category.units) {
          if (from === to) continue;
          const body = await response(`2.5 ${from.key.replaceAll('_', ' ')} in ${to.key.replaceAll('_', ' ')}`);
          if (body.answer?.type === 'unit') unitAnswers++;
          expect(instantResponseJson(body)).toBe(JSON.stringify(body));
        }
      }
    }
    // The loop above is about unit answers: most pairs must be answered as such.
    expect(unitAnswers).toBeGreaterThan(500);
  });

  it('leaves the unit answer it writes as it was: the same list of units, shared with every answer of its category', async () => {
    const first = await response('17 km in miles');
    const second = await response('3 m in feet');
    const unitsOf = (body: InstantResponse) => (body.answer?.payload as { units?: unknown } | undefined)?.units;
    const units = unitsOf(first);
    expect(Array.isArray(units)).toBe(true);
    expect(instantResponseJson(first)).toContain('"units":[{');
    expect(unitsOf(first)).toBe(units);
    expect(unitsOf(second)).toBe(units);
    expect(instantResponseJson(first)).toBe(JSON.stringify(first));
  });

  it('is JSON.stringify’s text whatever the query holds, the stand-in’s own text included', async () => {
    const unit = await response('17 km in miles');
    expect(unit.answer?.type).toBe('unit');
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom(',"units":0}', '\\",\\"units\\":0}', '"}', '\\', '\u2028', '\ud800'),
    );
    fc.assert(
      fc.property(text, text, (query, answerQuery) => {
        const body = { query, answer: { ...unit.answer!, query: answerQuery } };
        expect(instantResponseJson(body)).toBe(JSON.stringify(body));
      }),
      { numRuns: 5000 },
    );
  });

  it('is JSON.stringify’s text for other answers, no answer, and a payload whose units are not a known list', async () => {
    for (const q of ['17 * 7 + 3', 'md5 hello', '255 in hex', 'unix 1700000000', 'best pizza in naples']) {
      const body = await response(q);
      expect(instantResponseJson(body)).toBe(JSON.stringify(body));
    }
    const unit = await response('17 km in miles');
    const payload = unit.answer!.payload as Record<string, unknown>;
    const copied = { ...unit, answer: { ...unit.answer!, payload: { ...payload, units: [...(payload.units as [])] } } };
    expect(instantResponseJson(copied)).toBe(JSON.stringify(copied));
  });
});
