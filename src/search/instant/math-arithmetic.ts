/*
 * The maths evaluator's numbers and what it may do with them: exact integers
 * (BigInt, carrying their size in bits) and IEEE doubles, the limits of an
 * evaluation, the price in work of each integer operation (Work), and the
 * allowlisted constants and functions. math-parser.ts reads expressions into
 * these operations; math.ts is the handler.
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

/** Input the evaluator refuses: not an expression, or past one of its limits (no answer). */
export class MathError extends Error {
  override name = 'MathError';
}

/** An integer carries its size in bits (bitLength), which prices the work done on it. */
export type Value = { int: true; v: bigint; bits: number } | { int: false; v: number };
export type Int = Extract<Value, { int: true }>;

export const int = (v: bigint): Int => {
  const bits = bitLength(v);
  if (bits > MATH_LIMITS.bits) throw new MathError('number too large');
  return { int: true, v, bits };
};
export const float = (v: number): Value => {
  if (Number.isNaN(v)) throw new MathError('not a number');
  if (!Number.isFinite(v)) throw new MathError('overflow');
  return { int: false, v };
};
export const num = (x: Value): number => (x.int ? Number(x.v) : x.v);

/** Bits of |v| counted in hex digits (4 per digit): an upper bound, used only against the limits. */
export function bitLength(v: bigint): number {
  const a = v < 0n ? -v : v;
  return a === 0n ? 0 : a.toString(16).length * 4;
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
export const STEP = 16;

export const limbs = (bits: number): number => (bits >> 6) + 1;

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

export const CONSTANTS: Record<string, number> = {
  pi: Math.PI,
  e: Math.E,
  tau: 2 * Math.PI,
  phi: (1 + Math.sqrt(5)) / 2,
};

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

export const FUNCTIONS: Record<string, (args: Value[], work: Work) => Value> = {
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
export const DEGREE_NAMES = new Set(['deg', 'degree', 'degrees']);

/** Every name an expression may hold: the others make the tokenizer give up (see tokenize). */
export const KNOWN_NAMES = new Set([...Object.keys(CONSTANTS), ...Object.keys(FUNCTIONS), ...DEGREE_NAMES]);

export function factorial(x: Value, work: Work): Value {
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

export function add(a: Value, b: Value, sign: 1 | -1, work: Work): Value {
  if (a.int && b.int) {
    work.charge(limbs(a.bits) + limbs(b.bits) + STEP);
    return int(sign === 1 ? a.v + b.v : a.v - b.v);
  }
  return float(sign === 1 ? num(a) + num(b) : num(a) - num(b));
}

export function multiply(a: Value, b: Value, work: Work): Value {
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

export function divide(a: Value, b: Value, work: Work): Value {
  if (num(b) === 0 && (!b.int || b.v === 0n)) throw new MathError('division by zero');
  if (a.int && b.int) {
    // The remainder, then the quotient or the ratio of the two scaled down.
    work.charge(2 * divisionCost(a.bits, b.bits));
    return a.v % b.v === 0n ? int(a.v / b.v) : float(ratio(a, b));
  }
  return float(num(a) / num(b));
}

export function modulo(a: Value, b: Value, work: Work): Value {
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

export function power(a: Value, b: Value, work: Work): Value {
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
