import { escapeRegExp, prefixMatcher } from './text.js';
import type { InstantHandler } from './types.js';
import { BASE_VOCABULARY } from './vocabulary.js';

/*
 * `base`: an integer in decimal, hex, binary and octal ("255 to hex",
 * "0xff", "0b1010 to decimal", "hex ff", "ff hex to decimal", "binary
 * 1010"). "<base> <digits>" reads the digits in that base; "<number> to
 * <base>" reads a decimal number (or a 0x/0b/0o literal). A bare literal
 * counts only with its 0x/0b/0o prefix. Fields: `dec`, `hex` (upper case),
 * `bin`, `oct` (digits without prefixes, a leading "-" when negative) and
 * `value` (the number; magnitudes up to 2^64).
 */

export const BASE_MAX = 2n ** 64n;

const V = Object.values(BASE_VOCABULARY);
const BASES = new Map<string, number>(V.flatMap((v) => Object.entries(v.bases)));
const baseName = `(${[...BASES.keys()]
  .sort((a, b) => b.length - a.length)
  .map((w) => escapeRegExp(w).replace(/ /g, '\\s+'))
  .join('|')})`;
const connector = `(?:${V.flatMap((v) => v.connectors)
  .map(escapeRegExp)
  .join('|')})`;
const afterPrefix = prefixMatcher(V.flatMap((v) => v.prefixes));

const DIGITS: Record<number, RegExp> = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^\d+$/, 16: /^[0-9a-f]+$/ };
const LITERAL = /^(-?)0([xbo])([0-9a-f]+)$/;

/** The integer written in `s` in `base` (a 0x/0b/0o prefix wins), or null. */
export function readInteger(s: string, base: number | null): bigint | null {
  const t = s.toLowerCase().replace(/_/g, '');
  const lit = LITERAL.exec(t);
  let negative = false;
  let digits: string;
  let radix: number;
  if (lit) {
    negative = lit[1] === '-';
    radix = lit[2] === 'x' ? 16 : lit[2] === 'b' ? 2 : 8;
    digits = lit[3]!;
    if (base !== null && base !== radix) return null;
  } else {
    negative = t.startsWith('-');
    digits = negative ? t.slice(1) : t;
    // "ff to decimal": digits that are not decimal but are hex are read as hex
    radix = base ?? (!DIGITS[10]!.test(digits) && DIGITS[16]!.test(digits) ? 16 : 10);
  }
  if (!DIGITS[radix]!.test(digits) || digits.length > 80) return null;
  const prefix = radix === 16 ? '0x' : radix === 2 ? '0b' : radix === 8 ? '0o' : '';
  const value = BigInt(prefix + digits);
  if (value > BASE_MAX) return null;
  return negative ? -value : value;
}

export function describeInteger(v: bigint): Record<string, unknown> {
  const sign = v < 0n ? '-' : '';
  const a = v < 0n ? -v : v;
  return {
    dec: sign + a.toString(10),
    hex: sign + a.toString(16).toUpperCase(),
    bin: sign + a.toString(2),
    oct: sign + a.toString(8),
    value: Number(v),
  };
}

const NUM = '(-?[0-9a-z_]+)';
const PATTERNS: { re: RegExp; value: number; base?: number; connector?: true }[] = [
  // "ff hex to decimal", "1010 binary in hex"
  {
    re: new RegExp(`^${NUM}\\s+${baseName}\\s+${connector}\\s+${baseName}$`, 'u'),
    value: 1,
    base: 2,
    connector: true,
  },
  // "hex ff to decimal"
  {
    re: new RegExp(`^${baseName}\\s+${NUM}\\s+${connector}\\s+${baseName}$`, 'u'),
    value: 2,
    base: 1,
    connector: true,
  },
  // "255 to hex", "0xff to decimal"
  { re: new RegExp(`^${NUM}\\s+${connector}\\s+${baseName}$`, 'u'), value: 1, connector: true },
  // "hex ff", "binary 1010", "decimal 255"
  { re: new RegExp(`^${baseName}\\s+${NUM}$`, 'u'), value: 2, base: 1 },
  // "ff hex", "1010 binary"
  { re: new RegExp(`^${NUM}\\s+${baseName}$`, 'u'), value: 1, base: 2 },
];

export const baseHandler: InstantHandler = {
  type: 'base',
  async answer(ctx) {
    const text = afterPrefix(ctx.text) ?? ctx.text;
    if (LITERAL.test(text)) {
      const v = readInteger(text, null);
      return v === null ? null : describeInteger(v);
    }
    for (const p of PATTERNS) {
      const m = p.re.exec(text);
      if (!m) continue;
      // Without a connector only unmistakable names: "oct 31" and "dec 25" are dates.
      if (!p.connector && (m[p.base ?? 0] ?? '').length <= 3 && m[p.base ?? 0] !== 'hex') return null;
      const base = p.base === undefined ? null : (BASES.get(m[p.base]!.replace(/\s+/g, ' ')) ?? null);
      const v = readInteger(m[p.value]!, base);
      return v === null ? null : describeInteger(v);
    }
    return null;
  },
};
