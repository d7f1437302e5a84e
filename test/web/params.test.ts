import { describe, expect, it } from 'vitest';
import { suggestQuerySchema, webQuerySchema } from '../../src/search/queries.js';
import { parseInteger, parseQuery } from '../../src/search/query-string.js';

const ALL = ['provider_01', 'provider_02', 'provider_03', 'provider_04'];
const web = (query: Record<string, string | string[]>) => parseQuery(webQuerySchema, query);

describe('web search parameters', () => {
  it('defaults everything but q: all engines, safe on, no language, page 1, no date', () => {
    expect(web({ q: '  rust  ' })).toEqual({
      ok: true,
      value: { q: 'rust', engine: ALL, safe: true, lang: '', page: 1, date: '' },
    });
  });

  it('requires q, also when blank or whitespace only', () => {
    const blanks: Record<string, string>[] = [{}, { q: '' }, { q: ' \t\n ' }];
    for (const query of blanks) {
      expect(web(query)).toEqual({ ok: false, errors: { q: 'This query parameter is required.' } });
    }
  });

  it('rejects a q over 2,000 characters (counted in code points) and accepts exactly 2,000', () => {
    expect(web({ q: 'a'.repeat(2000) }).ok).toBe(true);
    expect(web({ q: '😀'.repeat(2000) }).ok).toBe(true);
    const long = web({ q: 'a'.repeat(2001) });
    expect(long.ok).toBe(false);
    if (!long.ok) expect(Object.keys(long.errors)).toEqual(['q']);
    if (!long.ok) expect(long.errors.q).toMatch(/2000/);
  });

  it('parses engine lists separated by commas and/or spaces, deduplicated, in canonical order', () => {
    const cases: [string, string[]][] = [
      ['all', ALL],
      ['ALL', ALL],
      ['', ALL],
      ['provider_03,provider_01', ['provider_01', 'provider_03']],
      ['provider_04 provider_02', ['provider_02', 'provider_04']],
      [' Provider_02 ,, provider_02\tprovider_01 ', ['provider_01', 'provider_02']],
      [',', []],
    ];
    for (const [engine, expected] of cases) {
      const r = web({ q: 'x', engine });
      expect(r.ok && r.value.engine, engine).toEqual(expected);
    }
  });

  it('names unknown engines in input order (duplicates kept) and lists the valid ones', () => {
    expect(web({ q: 'x', engine: 'foo' })).toEqual({
      ok: false,
      errors: {
        engine: 'Unknown engine(s): foo. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").',
      },
    });
    const r = web({ q: 'x', engine: 'Bar,provider_01 foo,bar,all' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.engine).toMatch(/^Unknown engine\(s\): bar, foo, bar, all\. Valid: /);
  });

  it('turns safe search off only for off, false, 0 and no (any case, spaces trimmed)', () => {
    for (const safe of ['off', 'OFF', ' false ', '0', 'No']) {
      const r = web({ q: 'x', safe });
      expect(r.ok && r.value.safe, safe).toBe(false);
    }
    for (const safe of ['on', 'true', '1', 'yes', '', 'whatever']) {
      const r = web({ q: 'x', safe });
      expect(r.ok && r.value.safe, safe).toBe(true);
    }
  });

  it('accepts integer pages the way Python int() does and clamps them to 1..50', () => {
    const cases: [string, number][] = [
      ['1', 1],
      ['7', 7],
      [' 3 ', 3],
      ['+4', 4],
      ['0', 1],
      ['-5', 1],
      ['51', 50],
      ['99999999999999999999999', 50],
      ['1_0', 10],
      ['٣', 3],
      ['１２', 12],
    ];
    for (const [page, expected] of cases) {
      const r = web({ q: 'x', page });
      expect(r.ok && r.value.page, page).toBe(expected);
    }
  });

  it('rejects a non-integer page with "Must be an integer."', () => {
    for (const page of ['', '2.5', 'abc', '1e3', '_1', '1__0', '0x10', '--1']) {
      expect(web({ q: 'x', page }), page).toEqual({ ok: false, errors: { page: 'Must be an integer.' } });
    }
  });

  it('takes d, w, m and y as date filters, empty as none', () => {
    for (const [date, expected] of [
      ['d', 'd'],
      [' W ', 'w'],
      ['m', 'm'],
      ['y', 'y'],
      ['', ''],
      [' ', ''],
    ]) {
      const r = web({ q: 'x', date: date! });
      expect(r.ok && r.value.date, date).toBe(expected);
    }
  });

  it('refuses any other date, naming the field', () => {
    for (const date of ['year', 'x', 'dw', '2024-01-01']) {
      expect(web({ q: 'x', date }), date).toEqual({
        ok: false,
        errors: { date: 'Must be d (day), w (week), m (month) or y (year).' },
      });
    }
  });

  it('lowercases and trims lang without validating it', () => {
    const r = web({ q: 'x', lang: ' EN-gb ' });
    expect(r.ok && r.value.lang).toBe('en-gb');
  });

  it('reports every invalid field at once, in the order q, engine, page', () => {
    expect(web({ engine: 'nope', page: 'x' })).toEqual({
      ok: false,
      errors: {
        q: 'This query parameter is required.',
        engine: 'Unknown engine(s): nope. Valid: provider_01, provider_02, provider_03, provider_04 (or "all").',
        page: 'Must be an integer.',
      },
    });
  });

  it('takes the last value of a repeated parameter', () => {
    const r = web({ q: ['first', 'second'], page: ['x', '2'] });
    expect(r).toMatchObject({ ok: true, value: { q: 'second', page: 2 } });
  });

  it('ignores parameters that are not strings and a query that is not an object', () => {
    expect(parseQuery(webQuerySchema, null)).toEqual({ ok: false, errors: { q: 'This query parameter is required.' } });
    expect(parseQuery(webQuerySchema, { q: { nested: 'x' } })).toMatchObject({ ok: false });
  });

  it('parses the suggest query with the same q rules', () => {
    expect(parseQuery(suggestQuerySchema, { q: ' hello ' })).toEqual({ ok: true, value: { q: 'hello' } });
    expect(parseQuery(suggestQuerySchema, {})).toEqual({
      ok: false,
      errors: { q: 'This query parameter is required.' },
    });
  });
});

describe('parseInteger', () => {
  it('reads Unicode decimal digits of any script', () => {
    expect(parseInteger('४२')).toBe(42); // Devanagari
    expect(parseInteger('𝟗')).toBe(9); // mathematical bold digit nine
    expect(parseInteger('²')).toBeNull(); // superscript two is not a decimal digit
  });
});
