import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leadingAmount } from '../../src/search/instant/amount.js';
import { describeEpoch } from '../../src/search/instant/timestamp.js';
import { collapse, looksLikeNotMath, tokenize } from '../../src/search/instant/math.js';
import { formatNumber, groupDigits } from '../../src/search/instant/text.js';

/*
 * The shortcuts the instant answers take on their usual input give what the longer way gives, on
 * any input: each against the expressions it replaced.
 */

/** groupDigits as it was written with a lookahead over the whole integer part. */
function groupDigitsReference(plain: string): string {
  const negative = plain.startsWith('-');
  const body = negative ? plain.slice(1) : plain;
  const [int = '', frac] = body.split('.');
  return (negative ? '-' : '') + int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac ? `.${frac}` : '');
}

/** formatNumber as it was written, trailing zeros dropped by expressions. */
function formatNumberReference(x: number, sig = 12): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const abs = Math.abs(x);
  if (abs >= 1e21 || abs < 1e-9) {
    const [mant = '', exp = ''] = x.toExponential(Math.max(0, sig - 1)).split('e');
    const m = mant.includes('.') ? mant.replace(/0+$/, '').replace(/\.$/, '') : mant;
    return `${m}e${exp}`;
  }
  if (abs >= 10 ** sig) return groupDigitsReference(Math.round(x).toFixed(0));
  const magnitude = Math.floor(Math.log10(abs));
  const decimals = Math.max(0, Math.min(100, sig - 1 - magnitude));
  let s = x.toFixed(decimals);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return groupDigitsReference(s === '-0' ? '0' : s);
}

/** math.ts's collapse as it was written: three scans of every expression. */
const collapseReference = (s: string) =>
  s
    .replace(/\s+/g, ' ')
    .replace(/\s*\^\s*/g, '^')
    .trim();

const textOf = (chars: string[], maxLength = 16) =>
  fc.array(fc.constantFrom(...chars), { maxLength }).map((parts) => parts.join(''));

describe('number formatting shortcuts', () => {
  it('groups the digits of any string as the lookahead expression does', () => {
    fc.assert(
      fc.property(textOf([...'0123456789', '-', '.', 'e', '+', 'a', ',', ' ', '١']), (s) => {
        expect(groupDigits(s)).toBe(groupDigitsReference(s));
      }),
      { numRuns: 20_000 },
    );
    for (const [plain, grouped] of [
      ['1234567.5', '1,234,567.5'],
      ['-1000', '-1,000'],
      ['999', '999'],
      ['100000', '100,000'],
      ['12345678901234567890', '12,345,678,901,234,567,890'],
      ['1.', '1'],
      ['', ''],
    ]) {
      expect(groupDigits(plain!)).toBe(grouped);
    }
  });

  it('writes any number for people as the expressions that dropped its trailing zeros did', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.double(), fc.integer(), fc.double({ min: -1e6, max: 1e6 }), fc.constantFrom(0.1, 0.5, 100, 1e-9)),
        fc.integer({ min: 1, max: 15 }),
        (x, sig) => {
          expect(formatNumber(x, sig)).toBe(formatNumberReference(x, sig));
        },
      ),
      { numRuns: 20_000 },
    );
    expect(formatNumber(7670.82736817, 6)).toBe('7,670.83');
    expect(formatNumber(2.5, 12)).toBe('2.5');
    expect(formatNumber(-0.0000001, 12)).toBe('-0.0000001');
  });
});

describe('maths shortcuts', () => {
  it('leaves spacing as its three replaces would, on any text', () => {
    // Every kind of space the replaces act on, the power sign and plain characters.
    const chars = [...'12 x+^(.', '\t', '\n', '\u00a0', '\u2028', '\u3000', '\ufeff', 'é'];
    fc.assert(
      fc.property(textOf(chars), (s) => {
        expect(collapse(s)).toBe(collapseReference(s));
      }),
      { numRuns: 20_000 },
    );
    expect(collapse('12 * 34 + 5')).toBe('12 * 34 + 5');
    expect(collapse(' 2 ^ 10 ')).toBe('2^10');
  });

  it('reads every kind of space between tokens as a space, and numbers in any base and case', () => {
    const spaces = [' ', '\t', '\n', '\u000b', '\f', '\r', '\u00a0', '\u2003', '\u2028', '\u3000', '\ufeff'];
    fc.assert(
      fc.property(textOf([...'12.+*( )', 'pi', 'sqrt', '0x1F', '0B101', '0o17', ...spaces]), (s) => {
        const asSpaces = s.replace(/\s/g, ' ');
        let given: unknown;
        let spaced: unknown;
        try {
          given = tokenize(s);
        } catch (err) {
          given = (err as Error).message;
        }
        try {
          spaced = tokenize(asSpaces);
        } catch (err) {
          spaced = (err as Error).message;
        }
        expect(given).toEqual(spaced);
      }),
      { numRuns: 10_000 },
    );
    // An integer carries its size in bits (four per hex digit) besides its value.
    expect(tokenize('0X1f\u3000+ 0b11')).toEqual([
      { t: 'num', value: { int: true, v: 31n, bits: 8 } },
      { t: 'op', op: '+' },
      { t: 'num', value: { int: true, v: 3n, bits: 4 } },
    ]);
    expect(tokenize('2.50')).toEqual([{ t: 'num', value: { int: false, v: 2.5 } }]);
    expect(tokenize('007')).toEqual([{ t: 'num', value: { int: true, v: 7n, bits: 4 } }]);
    expect(tokenize('2 ~ 3')).toBeNull();
  });
});

describe('amounts and look-alikes of maths', () => {
  /** leadingAmount as it was written: both fraction expressions and the comma replace on every amount. */
  function leadingAmountReference(text: string): { amount: number; rest: string } | null {
    const m = /^(?:[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d+)?|[+-]?\.\d+|\d+\s+\d+\/\d+|\d+\/\d+)/i.exec(
      text,
    );
    if (!m) return null;
    const t = m[0];
    const mixed = /^(\d+)\s+(\d+)\/(\d+)$/.exec(t);
    const fraction = /^(\d+)\/(\d+)$/.exec(t);
    let amount: number;
    if (mixed) amount = Number(mixed[1]) + Number(mixed[2]) / Number(mixed[3]);
    else if (fraction) amount = Number(fraction[1]) / Number(fraction[2]);
    else amount = Number(t.replace(/,/g, ''));
    if (!Number.isFinite(amount)) return null;
    return { amount, rest: text.slice(t.length).trim() };
  }
  const NOT_MATH = [
    /^\d{4}-\d{1,2}-\d{1,2}$/,
    /^\d{1,2}[/-]\d{1,2}[/-]\d{2,4}$/,
    /^\+?\d{0,3}[\s.-]?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}$/,
    /^\d+\.\d+\.\d+/,
  ];

  it('reads any leading amount as the expressions did', () => {
    fc.assert(
      fc.property(textOf([...'0123456789', ',', '.', '/', ' ', '-', '+', 'e', 'km']), (s) => {
        expect(leadingAmount(s)).toEqual(leadingAmountReference(s));
      }),
      { numRuns: 20_000 },
    );
    expect(leadingAmount('2.5 km')).toEqual({ amount: 2.5, rest: 'km' });
    expect(leadingAmount('1,000.5 km')).toEqual({ amount: 1000.5, rest: 'km' });
  });

  it('tells dates, phone numbers and versions from maths as the four expressions do', () => {
    fc.assert(
      fc.property(textOf([...'0123456789', '-', '/', '.', '+', '(', ')', ' ', '\t'], 18), (q) => {
        expect(looksLikeNotMath(q)).toBe(NOT_MATH.some((re) => re.test(q)));
      }),
      { numRuns: 30_000 },
    );
    for (const q of ['2024-01-31', '1/2/2024', '+1 555 123 4567', '(555) 123-4567', '555-123-4567', '1.2.3']) {
      expect(looksLikeNotMath(q)).toBe(true);
    }
    expect(looksLikeNotMath('17 * 7 + 3')).toBe(false);
  });
});

describe('timestamp shortcut', () => {
  /** describeEpoch as it was written, its date and time cut from toISOString. */
  function describeEpochReference(epoch: number, given: boolean): Record<string, unknown> {
    const weekdays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const months = [
      'January',
      'February',
      'March',
      'April',
      'May',
      'June',
      'July',
      'August',
      'September',
      'October',
      'November',
      'December',
    ];
    const d = new Date(epoch * 1000);
    const plainIso = d.toISOString().slice(0, 19);
    const time = plainIso.slice(11, 19);
    return {
      epoch,
      given,
      utc: `${plainIso.slice(0, 10)} ${time} UTC`,
      utc_full: `${weekdays[d.getUTCDay()]}, ${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${time} UTC`,
      iso: `${plainIso}Z`,
    };
  }

  it('describes every second of years 1 to 9999 as toISOString did', () => {
    // Years 1..9999 (parseEpoch's range), and the edges of days, months and leap years.
    const seconds = fc.integer({ min: -62135596800, max: 253402300799 });
    fc.assert(
      fc.property(seconds, fc.boolean(), (epoch, given) => {
        expect(describeEpoch(epoch, given)).toEqual(describeEpochReference(epoch, given));
      }),
      { numRuns: 20_000 },
    );
    for (const epoch of [-62135596800, -62135596801 + 86400, 0, -1, 951782400, 951868799, 253402300799, 1700000017]) {
      expect(describeEpoch(epoch, true)).toEqual(describeEpochReference(epoch, true));
    }
    expect(describeEpoch(-62135596800, false)).toMatchObject({
      utc: '0001-01-01 00:00:00 UTC',
      iso: '0001-01-01T00:00:00Z',
    });
  });
});
