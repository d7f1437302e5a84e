import { escapeRegExp, formatNumber, groupDigits, isAsciiDigits, prefixMatcher } from './text.js';
import type { InstantHandler } from './types.js';
import { MATH_VOCABULARY } from './vocabulary.js';

/*
 * `math`: arithmetic by a small evaluator of its own — a tokenizer and a
 * recursive-descent parser over an allowlist of operators, functions and
 * constants; nothing is ever executed as code. Integers are exact (BigInt)
 * like Python's, floats are IEEE doubles. Bounds, each failing as "no answer":
 * the query length (280, checked by the runner), tokens (300), nesting depth
 * (40), exponents (|e| ≤ 1000), factorials (n ≤ 1000), integers of at most
 * 100 000 bits along the way, the work of the whole evaluation (see Work),
 * and a result that fits a double (`raw` is a JSON number). Division by zero,
 * overflow, NaN: no answer.
 * Fields: `expr` (the expression as read), `result` (for people: thousands
 * separators, at most 12 significant digits for non-integers), `raw`.
 */

/**
 * The work one evaluation may do, in the units Work counts: far more than any expression whose
 * result fits a double needs, and little enough that the worst an expression can make the
 * evaluator do leaves the event loop free again quickly (bench/math-work.ts measures it).
 */
const WORK_LIMIT = 1_000_000;

export const MATH_LIMITS = {
  tokens: 300,
  depth: 40,
  exponent: 1000,
  factorial: 1000,
  bits: 100_000,
  /** Work units (see Work) one evaluation may spend. */
  work: WORK_LIMIT,
} as const;

/**
 * Input the evaluator refuses once its tokens are read (a query that is no
 * expression at all is refused by tokenize without one): it captures no
 * stack trace, which cost more than the rest of the evaluation.
 */
export class MathError extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}
MathError.prototype.name = 'MathError';

/** An integer carries its size in bits (bitLength), which prices the work done on it. */
type Value = { int: true; v: bigint; bits: number } | { int: false; v: number };
type Int = Extract<Value, { int: true }>;

const int = (v: bigint): Int => {
  const bits = bitLength(v);
  if (bits > MATH_LIMITS.bits) throw new MathError('number too large');
  return { int: true, v, bits };
};
const float = (v: number): Value => {
  if (Number.isNaN(v)) throw new MathError('not a number');
  if (!Number.isFinite(v)) throw new MathError('overflow');
  return { int: false, v };
};
const num = (x: Value): number => (x.int ? Number(x.v) : x.v);

/** Bits of |v| counted in hex digits (4 per digit): an upper bound, used only against the limits. */
export function bitLength(v: bigint): number {
  const a = v < 0n ? -v : v;
  // The usual integer fits 32 bits: its digits are counted without writing it out.
  if (a <= 0xffffffffn) {
    const x = Number(a);
    return x === 0 ? 0 : ((35 - Math.clz32(x)) >> 2) * 4;
  }
  return a.toString(16).length * 4;
}

/**
 * The work of one evaluation, charged BEFORE each integer operation by what it will cost: the
 * sizes of its operands in limbs (64 bits), as a schoolbook algorithm would spend them (an upper
 * bound of what the engine's faster ones do), and a step per allocation. Spending more than the
 * limit refuses the expression (a MathError, so no answer) before the costly operation runs.
 * Floats cost nothing: each of their operations is one instruction or a libm call.
 */
export class Work {
  spent = 0;
  constructor(readonly limit: number = MATH_LIMITS.work) {}

  charge(units: number): void {
    this.spent += units;
    if (this.spent > this.limit) throw new MathError('too much work');
  }
}

/** Units a step costs besides its limbs (an allocation, a loop turn). */
const STEP = 16;

const limbs = (bits: number): number => (bits >> 6) + 1;

/** Long division of an integer of `a` bits by one of `b` bits. */
const divisionCost = (a: number, b: number): number => {
  const la = limbs(a);
  const lb = limbs(b);
  return lb * Math.max(1, la - lb + 1) + la + STEP;
};

/** An integer-valued float as an integer, when it is exactly one (beyond 2^53 a double's digits are noise). */
function fromIntegralFloat(x: number): Value {
  return Number.isSafeInteger(x) ? int(BigInt(x)) : float(x);
}

// ---------- tokens ----------

type Token = { t: 'num'; value: Value } | { t: 'id'; name: string } | { t: 'op'; op: string };

// Sticky: each is tried at the tokenizer's position (lastIndex), without a copy of the rest of the text.
const NUMBER_RE = /(?:0x[0-9a-f]+|0b[01]+|0o[0-7]+|(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)/iy;
const ID_RE = /[a-z_][a-z0-9_]*/iy;

/** The match of a sticky regex at `at`, or null. */
function matchAt(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  return re.exec(text)?.[0] ?? null;
}

function readNumber(text: string): Value {
  // "0x…", "0b…", "0o…" in either case (what NUMBER_RE reads as an integer in another base).
  if (text.length > 1 && text.charCodeAt(0) === 48 && 'xXbBoO'.includes(text[1]!))
    return int(BigInt(text.toLowerCase()));
  if (isAsciiDigits(text)) return int(BigInt(text));
  const x = Number(text);
  if (!Number.isFinite(x)) throw new MathError('overflow');
  return float(x);
}

/**
 * The tokens of `expr`, or null when it cannot be an expression: a character no token starts with,
 * or a name that no rule takes (neither a constant, a function nor a degree sign). The parser
 * consumes every token and refuses such a name wherever it stands, so null is the answer it would
 * give, found without parsing or throwing: it is the usual outcome, as most queries that reach the
 * evaluator are not maths ("best pizza 2024" reads as names and a number).
 */
export function tokenize(expr: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const ch = expr[i]!;
    const code = ch.charCodeAt(0);
    if (code === 32 || (code < 128 ? code >= 9 && code <= 13 : /\s/.test(ch))) {
      i++;
      continue;
    }
    const n = (code >= 48 && code <= 57) || code === 46 ? matchAt(NUMBER_RE, expr, i) : null;
    const id = n === null ? matchAt(ID_RE, expr, i) : null;
    if (n !== null) {
      tokens.push({ t: 'num', value: readNumber(n) });
      i += n.length;
    } else if (id !== null) {
      const name = id.toLowerCase();
      if (!KNOWN_NAMES.has(name)) return null;
      tokens.push({ t: 'id', name });
      i += id.length;
    } else if (expr.startsWith('**', i)) {
      tokens.push({ t: 'op', op: '^' });
      i += 2;
    } else if ('+-*/^%!(),°'.includes(ch)) {
      tokens.push({ t: 'op', op: ch });
      i++;
    } else {
      return null;
    }
    if (tokens.length > MATH_LIMITS.tokens) throw new MathError('expression too long');
  }
  return tokens;
}

// ---------- evaluation (while parsing) ----------

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI, phi: (1 + Math.sqrt(5)) / 2 };

function toInt(x: Value, what: string, work: Work): Int {
  if (x.int) return x;
  if (Number.isInteger(x.v)) {
    // A double is at most 1024 bits.
    work.charge(limbs(1024) + STEP);
    return int(BigInt(x.v));
  }
  throw new MathError(`${what} needs an integer`);
}

/**
 * Euclid's algorithm, charged before it starts for its worst case: a first division of the larger
 * by the smaller, then at most 1.5 steps per bit of the smaller (Lamé's bound), each a division of
 * numbers no larger than it. A gcd of two huge numbers is thus refused unstarted.
 */
function gcd(a: Int, b: Int, work: Work): Int {
  const [big, small] = a.bits >= b.bits ? [a, b] : [b, a];
  if (small.v === 0n) return big.v < 0n ? int(-big.v) : big;
  work.charge(divisionCost(big.bits, small.bits) + Math.ceil(1.5 * small.bits + 2) * (2 * limbs(small.bits) + STEP));
  let x = small.v < 0n ? -small.v : small.v;
  let y = big.v % x;
  if (y < 0n) y = -y;
  while (y !== 0n) [x, y] = [y, x % y];
  return int(x);
}

const unary = (f: (x: number) => number) => (args: Value[]) => {
  if (args.length !== 1) throw new MathError('wrong number of arguments');
  return float(f(num(args[0]!)));
};

const FUNCTIONS: Record<string, (args: Value[], work: Work) => Value> = {
  sqrt: (args) => {
    const x = unary(Math.sqrt)(args);
    return fromIntegralFloat(x.v as number);
  },
  cbrt: (args) => fromIntegralFloat(unary(Math.cbrt)(args).v as number),
  abs: (args, work) => {
    if (args.length !== 1) throw new MathError('wrong number of arguments');
    const x = args[0]!;
    if (!x.int) return float(Math.abs(x.v));
    work.charge(limbs(x.bits) + STEP);
    return int(x.v < 0n ? -x.v : x.v);
  },
  round: (args, work) => {
    if (args.length === 2) {
      const digits = Number(toInt(args[1]!, 'round', work).v);
      if (digits < 0 || digits > 15) throw new MathError('digits out of range');
      return float(Number(num(args[0]!).toFixed(digits)));
    }
    const x = args[0]!;
    if (args.length !== 1) throw new MathError('wrong number of arguments');
    return x.int ? x : fromIntegralFloat(Math.round(x.v));
  },
  floor: (args) =>
    args[0]?.int && args.length === 1 ? args[0] : fromIntegralFloat(unary(Math.floor)(args).v as number),
  ceil: (args) => (args[0]?.int && args.length === 1 ? args[0] : fromIntegralFloat(unary(Math.ceil)(args).v as number)),
  trunc: (args) =>
    args[0]?.int && args.length === 1 ? args[0] : fromIntegralFloat(unary(Math.trunc)(args).v as number),
  sin: unary(Math.sin),
  cos: unary(Math.cos),
  tan: unary(Math.tan),
  asin: unary(Math.asin),
  acos: unary(Math.acos),
  atan: unary(Math.atan),
  arcsin: unary(Math.asin),
  arccos: unary(Math.acos),
  arctan: unary(Math.atan),
  sinh: unary(Math.sinh),
  cosh: unary(Math.cosh),
  tanh: unary(Math.tanh),
  exp: unary(Math.exp),
  ln: unary(Math.log),
  log10: unary(Math.log10),
  log2: unary(Math.log2),
  log: (args) => {
    if (args.length === 2) return float(Math.log(num(args[0]!)) / Math.log(num(args[1]!)));
    return unary(Math.log10)(args);
  },
  min: (args) => {
    if (args.length === 0) throw new MathError('wrong number of arguments');
    return args.reduce((a, b) => (num(b) < num(a) ? b : a));
  },
  max: (args) => {
    if (args.length === 0) throw new MathError('wrong number of arguments');
    return args.reduce((a, b) => (num(b) > num(a) ? b : a));
  },
  gcd: (args, work) => {
    if (args.length < 2) throw new MathError('wrong number of arguments');
    return args.map((a) => toInt(a, 'gcd', work)).reduce((x, y) => gcd(x, y, work));
  },
  lcm: (args, work) => {
    if (args.length < 2) throw new MathError('wrong number of arguments');
    let l = int(1n);
    for (const arg of args) {
      const a = toInt(arg, 'lcm', work);
      if (a.v === 0n) return int(0n);
      const abs = a.v < 0n ? int(-a.v) : a;
      const g = gcd(l, abs, work);
      // l / g first: no larger than the lcm, which the limit on bits bounds.
      work.charge(divisionCost(l.bits, g.bits));
      const part = int(l.v / g.v);
      l = multiply(part, abs, work) as Int;
    }
    return l;
  },
  fact: (args, work) => {
    if (args.length !== 1) throw new MathError('wrong number of arguments');
    return factorial(args[0]!, work);
  },
  factorial: (args, work) => FUNCTIONS.fact!(args, work),
};

/** Names read after a number as a degree sign ("sin 30 degrees"). */
const DEGREE_NAMES = new Set(['deg', 'degree', 'degrees']);

/** Every name an expression may hold: the others make the tokenizer give up (see tokenize). */
const KNOWN_NAMES = new Set([...Object.keys(CONSTANTS), ...Object.keys(FUNCTIONS), ...DEGREE_NAMES]);

function factorial(x: Value, work: Work): Value {
  const n = toInt(x, 'factorial', work).v;
  if (n < 0n) throw new MathError('factorial of a negative number');
  if (n > BigInt(MATH_LIMITS.factorial)) throw new MathError('factorial too large');
  // n steps, each a product no larger than n! (of at most n·log2(n) bits) by a one-limb number.
  const k = Number(n);
  work.charge(k * (limbs(k * Math.ceil(Math.log2(k + 1))) + STEP));
  let r = 1n;
  for (let i = 2n; i <= n; i++) r *= i;
  return int(r);
}

function add(a: Value, b: Value, sign: 1 | -1, work: Work): Value {
  if (a.int && b.int) {
    work.charge(limbs(a.bits) + limbs(b.bits) + STEP);
    return int(sign === 1 ? a.v + b.v : a.v - b.v);
  }
  return float(sign === 1 ? num(a) + num(b) : num(a) - num(b));
}

function multiply(a: Value, b: Value, work: Work): Value {
  if (a.int && b.int) {
    if (a.bits + b.bits > MATH_LIMITS.bits + 64) throw new MathError('number too large');
    work.charge(limbs(a.bits) * limbs(b.bits) + STEP);
    return int(a.v * b.v);
  }
  return float(num(a) * num(b));
}

function ratio(a: Int, b: Int): number {
  // Both may exceed a double: scale them down together first.
  const shift = Math.max(0, Math.max(a.bits, b.bits) - 1000);
  const s = BigInt(shift);
  return Number(a.v >> s) / Number(b.v >> s);
}

function divide(a: Value, b: Value, work: Work): Value {
  if (num(b) === 0 && (!b.int || b.v === 0n)) throw new MathError('division by zero');
  if (a.int && b.int) {
    // The remainder, then the quotient or the ratio of the two scaled down.
    work.charge(2 * divisionCost(a.bits, b.bits));
    return a.v % b.v === 0n ? int(a.v / b.v) : float(ratio(a, b));
  }
  return float(num(a) / num(b));
}

function modulo(a: Value, b: Value, work: Work): Value {
  if (a.int && b.int) {
    if (b.v === 0n) throw new MathError('division by zero');
    work.charge(2 * divisionCost(a.bits, b.bits) + limbs(b.bits));
    return int(((a.v % b.v) + b.v) % b.v);
  }
  const y = num(b);
  if (y === 0) throw new MathError('division by zero');
  const r = num(a) % y;
  return float(r !== 0 && r < 0 !== y < 0 ? r + y : r);
}

function power(a: Value, b: Value, work: Work): Value {
  const e = num(b);
  if (Math.abs(e) > MATH_LIMITS.exponent) throw new MathError('exponent too large');
  if (a.int && b.int && b.v >= 0n) {
    const bits = a.bits * Number(b.v);
    if (bits > MATH_LIMITS.bits) throw new MathError('number too large');
    // Squaring and multiplying: the last squaring dominates (each earlier one is at most half its
    // size). Priced by the result's real size (a small base's bits counted exactly, not by hex digits).
    const baseBits = a.bits <= 32 ? Math.log2(Math.max(1, Number(a.v < 0n ? -a.v : a.v))) + 1 : a.bits;
    const resultLimbs = limbs(Math.ceil(baseBits * Number(b.v)));
    work.charge(resultLimbs * resultLimbs + 10 * STEP);
    return int(a.v ** b.v);
  }
  if (num(a) === 0 && e < 0) throw new MathError('division by zero');
  return float(num(a) ** e);
}

class Parser {
  private pos = 0;
  private depth = 0;
  /** Whether anything beyond a lone number was seen (an operator, function or postfix). */
  operated = false;

  constructor(
    private readonly tokens: Token[],
    private readonly work: Work,
  ) {}

  parse(): Value {
    const v = this.expr();
    if (this.pos !== this.tokens.length) throw new MathError('unexpected input');
    return v;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isOp(op: string, offset = 0): boolean {
    const t = this.tokens[this.pos + offset];
    return t?.t === 'op' && t.op === op;
  }

  private enter(): void {
    if (++this.depth > MATH_LIMITS.depth) throw new MathError('nested too deeply');
  }

  private expr(): Value {
    this.enter();
    let v = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const sign = this.isOp('+') ? 1 : -1;
      this.pos++;
      this.operated = true;
      v = add(v, this.term(), sign, this.work);
    }
    this.depth--;
    return v;
  }

  /** Whether the next token can start an operand (for implicit multiplication and percent vs modulo). */
  private startsOperand(offset = 0): boolean {
    const t = this.tokens[this.pos + offset];
    if (!t) return false;
    if (t.t === 'num' || t.t === 'id') return true;
    return t.op === '(';
  }

  private term(): Value {
    let v = this.unary();
    for (;;) {
      if (this.isOp('*') || this.isOp('/') || (this.isOp('%') && this.startsOperand(1))) {
        const op = (this.peek() as { op: string }).op;
        this.pos++;
        this.operated = true;
        const rhs = this.unary();
        v =
          op === '*' ? multiply(v, rhs, this.work) : op === '/' ? divide(v, rhs, this.work) : modulo(v, rhs, this.work);
      } else if (this.isOp('(') || this.peek()?.t === 'id') {
        // implicit multiplication: 2pi, 3(4+5), (1+2)(3+4)
        this.operated = true;
        v = multiply(v, this.unary(), this.work);
      } else {
        return v;
      }
    }
  }

  private unary(): Value {
    if (this.isOp('-') || this.isOp('+')) {
      const negative = this.isOp('-');
      this.pos++;
      this.enter();
      const v = this.unary();
      this.depth--;
      if (!negative) return v;
      if (!v.int) return float(-v.v);
      this.work.charge(limbs(v.bits) + STEP);
      return int(-v.v);
    }
    return this.power();
  }

  private power(): Value {
    const base = this.postfix();
    if (this.isOp('^')) {
      this.pos++;
      this.operated = true;
      this.enter();
      const exponent = this.unary();
      this.depth--;
      return power(base, exponent, this.work);
    }
    return base;
  }

  private postfix(): Value {
    let v = this.primary();
    for (;;) {
      if (this.isOp('!')) {
        this.pos++;
        this.operated = true;
        v = factorial(v, this.work);
      } else if (this.isOp('%') && !this.startsOperand(1)) {
        this.pos++;
        this.operated = true;
        v = divide(v, int(100n), this.work);
      } else if (
        this.isOp('°') ||
        (this.peek()?.t === 'id' && DEGREE_NAMES.has((this.peek() as { name: string }).name))
      ) {
        this.pos++;
        this.operated = true;
        v = float((num(v) * Math.PI) / 180);
      } else {
        return v;
      }
    }
  }

  private primary(): Value {
    const t = this.peek();
    if (!t) throw new MathError('unexpected end');
    if (t.t === 'num') {
      this.pos++;
      return t.value;
    }
    if (t.t === 'op' && t.op === '(') {
      this.pos++;
      const v = this.expr();
      if (!this.isOp(')')) throw new MathError('missing )');
      this.pos++;
      return v;
    }
    if (t.t === 'id') {
      this.pos++;
      if (Object.hasOwn(CONSTANTS, t.name)) {
        // a constant alone ("pi", "e") is a search, not a sum
        return float(CONSTANTS[t.name]!);
      }
      if (Object.hasOwn(FUNCTIONS, t.name)) {
        this.operated = true;
        const fn = FUNCTIONS[t.name]!;
        if (this.isOp('(')) {
          this.pos++;
          this.enter();
          const args: Value[] = [];
          if (!this.isOp(')')) {
            args.push(this.expr());
            while (this.isOp(',')) {
              this.pos++;
              args.push(this.expr());
            }
          }
          if (!this.isOp(')')) throw new MathError('missing )');
          this.pos++;
          this.depth--;
          return fn(args, this.work);
        }
        // "sqrt 16", "sin 30°"
        this.enter();
        const arg = this.postfix();
        this.depth--;
        return fn([arg], this.work);
      }
      throw new MathError(`unknown name ${t.name}`);
    }
    throw new MathError('unexpected token');
  }
}

export interface MathResult {
  result: string;
  raw: number;
}

/**
 * Evaluates an expression; throws MathError when it is not one, or is out of bounds. `work` counts
 * what it spends (a fresh one with the usual limit by default).
 */
export function evaluate(expr: string, work = new Work()): MathResult & { operated: boolean } {
  const tokens = tokenize(expr);
  if (tokens === null) throw new MathError('not an expression');
  return evaluateTokens(tokens, work);
}

function evaluateTokens(tokens: Token[], work = new Work()): MathResult & { operated: boolean } {
  const parser = new Parser(tokens, work);
  const value = parser.parse();
  if (value.int) {
    const raw = Number(value.v);
    if (!Number.isFinite(raw)) throw new MathError('overflow');
    return { result: groupDigits(value.v.toString()), raw, operated: parser.operated };
  }
  const raw = Object.is(value.v, -0) ? 0 : value.v;
  return { result: formatNumber(raw, 12), raw, operated: parser.operated };
}

// ---------- the handler ----------

const V = Object.values(MATH_VOCABULARY);
const afterPrefix = prefixMatcher(V.flatMap((v) => v.prefixes));
const WORDS = V.flatMap((v) => Object.entries(v.words)).sort((a, b) => b[0].length - a[0].length);
const WORD_RE = new RegExp(`\\b(?:${WORDS.map(([w]) => escapeRegExp(w).replace(/ /g, '\\s+')).join('|')})\\b`, 'giu');
const WORD_MAP = new Map(WORDS.map(([w, s]) => [w, s]));

/**
 * Strings that look like arithmetic but are something else: dates, phone numbers, versions. Each
 * with what a string needs to match it (a dash, a slash or dash, twelve characters, a point), so
 * that the usual expression ("17 * 7 + 3") runs none of them.
 */
const NOT_MATH: { re: RegExp; may: (q: string) => boolean }[] = [
  { re: /^\d{4}-\d{1,2}-\d{1,2}$/, may: (q) => q.includes('-') },
  { re: /^\d{1,2}[/-]\d{1,2}[/-]\d{2,4}$/, may: (q) => q.includes('/') || q.includes('-') },
  { re: /^\+?\d{0,3}[\s.-]?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}$/, may: (q) => q.length >= 12 },
  { re: /^\d+\.\d+\.\d+/, may: (q) => q.includes('.') },
];

/** Whether `q` is one of the NOT_MATH strings (exported for the test against the expressions alone). */
export function looksLikeNotMath(q: string): boolean {
  for (const { re, may } of NOT_MATH) if (may(q) && re.test(q)) return true;
  return false;
}

/** The symbols toExpression writes as the evaluator's operators, names and powers. */
const SYMBOLS = /[×✕⋅·÷∕−–—²³π√]/;

/** The expression as the evaluator reads it (symbols for spelled-out operators and the like). */
export function toExpression(q: string): string {
  let s = q.trim();
  s = afterPrefix(s) ?? s;
  // A trailing "=", "= ?" or "?" (the usual expression has neither sign: two replaces saved).
  if (s.includes('=')) s = s.replace(/\s*=\s*\??$/, '');
  if (s.includes('?')) s = s.replace(/\?$/, '');
  // The usual query is plain ASCII digits and operators ("12 * 34 + 5"): the replaces below could
  // change nothing in it (the symbols are not ASCII, every spelled-out operator has a letter, and
  // a comma may be a thousands separator).
  if (!/[^\d\s+\-*/^%!().]/.test(s)) return collapse(s);
  // Most queries that get here hold none of these symbols: one test instead of seven replaces.
  if (SYMBOLS.test(s)) {
    s = s
      .replace(/[×✕⋅·]/g, '*')
      .replace(/[÷∕]/g, '/')
      .replace(/[−–—]/g, '-')
      .replace(/²/g, '^2')
      .replace(/³/g, '^3')
      .replace(/π/g, 'pi')
      .replace(/√/g, 'sqrt ');
  }
  s = s.replace(WORD_RE, (w) => ` ${WORD_MAP.get(w.toLowerCase().replace(/\s+/g, ' ')) ?? w} `);
  s = s.replace(/%\s*of\b/gi, '% *');
  // "5 x 3" (x between numbers means times)
  s = s.replace(/(\d|\))\s*x\s*(?=[\d(.])/gi, '$1*');
  // thousands separators, when there is no function call whose arguments commas could separate
  if (!/[a-z]\s*\(/i.test(s)) s = s.replace(/(?<=\d),(?=\d{3}(?!\d))/g, '');
  return collapse(s);
}

/** Single spaces, none around `^`, none at either end. */
export function collapse(s: string): string {
  // The usual expression ("12 * 34 + 5") is already so: three scans of it cost more than its evaluation.
  if (isCollapsed(s)) return s;
  return s
    .replace(/\s+/g, ' ')
    .replace(/\s*\^\s*/g, '^')
    .trim();
}

/** Printable ASCII and single spaces, none at either end, no `^`: what collapse leaves as it is. */
function isCollapsed(s: string): boolean {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 32) {
      if (i === 0 || i === n - 1 || s.charCodeAt(i + 1) === 32) return false;
    } else if (c < 33 || c > 126 || c === 94) {
      return false;
    }
  }
  return true;
}

export const mathHandler: InstantHandler = {
  type: 'math',
  answer(ctx) {
    if (looksLikeNotMath(ctx.q)) return null;
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
