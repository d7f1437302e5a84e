import { MathError } from './math-arithmetic.js';
import { evaluateTokens, tokenize } from './math-parser.js';
import { escapeRegExp, prefixMatcher } from './text.js';
import type { InstantHandler } from './types.js';
import { MATH_VOCABULARY } from './vocabulary.js';

/*
 * `math`: arithmetic by a small evaluator of its own — a tokenizer and a
 * recursive-descent parser (math-parser.ts) over an allowlist of operators,
 * functions and constants (math-arithmetic.ts); nothing is ever executed as code. Integers are exact (BigInt)
 * like Python's, floats are IEEE doubles. Bounds, each failing as "no answer":
 * the query length (280, checked by the runner), tokens (300), nesting depth
 * (40), exponents (|e| ≤ 1000), factorials (n ≤ 1000), integers of at most
 * 100 000 bits along the way, the work of the whole evaluation (see Work),
 * and a result that fits a double (`raw` is a JSON number). Division by zero,
 * overflow, NaN: no answer.
 * Fields: `expr` (the expression as read), `result` (for people: thousands
 * separators, at most 12 significant digits for non-integers), `raw`.
 */

// The evaluator, for the bench and the tests of its limits.
export { MATH_LIMITS, MathError, Work, bitLength } from './math-arithmetic.js';
export { type MathResult, evaluate, tokenize } from './math-parser.js';

const V = Object.values(MATH_VOCABULARY);
const afterPrefix = prefixMatcher(V.flatMap((v) => v.prefixes));
const WORDS = V.flatMap((v) => Object.entries(v.words)).sort((a, b) => b[0].length - a[0].length);
const WORD_RE = new RegExp(`\\b(?:${WORDS.map(([w]) => escapeRegExp(w).replace(/ /g, '\\s+')).join('|')})\\b`, 'giu');
const WORD_MAP = new Map(WORDS.map(([w, s]) => [w, s]));

/** Strings that look like arithmetic but are something else: dates, phone numbers, versions. */
const NOT_MATH = [
  /^\d{4}-\d{1,2}-\d{1,2}$/,
  /^\d{1,2}[/-]\d{1,2}[/-]\d{2,4}$/,
  /^\+?\d{0,3}[\s.-]?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}$/,
  /^\d+\.\d+\.\d+/,
];

/** The expression as the evaluator reads it (symbols for spelled-out operators and the like). */
export function toExpression(q: string): string {
  let s = q.trim();
  s = afterPrefix(s) ?? s;
  // A trailing "=", "= ?" or "?"
  s = s.replace(/\s*=\s*\??$/, '').replace(/\?$/, '');
  s = s
    .replace(/[×✕⋅·]/g, '*')
    .replace(/[÷∕]/g, '/')
    .replace(/[−–—]/g, '-')
    .replace(/²/g, '^2')
    .replace(/³/g, '^3')
    .replace(/π/g, 'pi')
    .replace(/√/g, 'sqrt ');
  s = s.replace(WORD_RE, (w) => ` ${WORD_MAP.get(w.toLowerCase().replace(/\s+/g, ' ')) ?? w} `);
  s = s.replace(/%\s*of\b/gi, '% *');
  // "5 x 3" (x between numbers means times)
  s = s.replace(/(\d|\))\s*x\s*(?=[\d(.])/gi, '$1*');
  // thousands separators, when there is no function call whose arguments commas could separate
  if (!/[a-z]\s*\(/i.test(s)) s = s.replace(/(?<=\d),(?=\d{3}(?!\d))/g, '');
  // single spaces, none around `^`, none at either end
  return s
    .replace(/\s+/g, ' ')
    .replace(/\s*\^\s*/g, '^')
    .trim();
}

export const mathHandler: InstantHandler = {
  type: 'math',
  async answer(ctx) {
    if (NOT_MATH.some((re) => re.test(ctx.q))) return null;
    const expr = toExpression(ctx.q);
    if (expr === '' || !/[\d]|pi|tau|phi|\be\b/.test(expr)) return null;
    try {
      const tokens = tokenize(expr);
      if (tokens === null) return null;
      const { result, raw, operated } = evaluateTokens(tokens);
      if (!operated) return null;
      return { expr, result, raw };
    } catch (err) {
      if (err instanceof MathError || err instanceof RangeError || err instanceof SyntaxError) return null;
      throw err;
    }
  },
};
