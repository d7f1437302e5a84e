/*
 * What the maths evaluator's work limit (MATH_LIMITS.work, src/search/instant/math.ts) means in
 * time on this machine: families of expressions that each make one kind of integer work as large as
 * the limit allows (powers, products, divisions, gcd, lcm, factorials), swept over their sizes. For
 * each: the units charged, whether it was refused, and the time of the evaluation (the median of a
 * few). The figures to read are the longest evaluation and the most time a unit took.
 *
 * `npx tsx bench/math-work.ts` (a few seconds; REPEAT=<runs per expression>, default 5).
 */
import { MATH_LIMITS, MathError, Work, evaluate } from '../src/search/instant/math.js';

const REPEAT = Number(process.env.REPEAT ?? 5);

/** Expressions of one family, by a size parameter (the exponent limit is 1000: large integers come from powers of powers). */
const FAMILIES: Record<string, (n: number) => string> = {
  power: (n) => `(15^1000)^${n}`,
  'powers summed': (n) => `${Array.from({ length: 8 }, () => `(3^1000)^${n}`).join('+')}*0+1`,
  product: (n) => `(2^1000)^${n}*(3^1000)^${n}*0+1`,
  'products repeated': (n) => `${Array.from({ length: 6 }, () => `(7^1000)^${n}*(7^1000)^${n}`).join('+')}*0+1`,
  division: (n) => `((7^1000)^${2 * n}+1) % ((3^1000)^${n}+2)`,
  'division by a small number': (n) => `((7^1000)^${n}+1) % 97`,
  quotient: (n) => `((7^1000)^${2 * n}+1) / ((3^1000)^${n}+2)`,
  gcd: (n) => `gcd((2^1000)^${n}+1, (3^1000)^${n}+2)`,
  'gcd of small numbers repeated': (n) =>
    `${Array.from({ length: 8 }, () => `gcd(2^${n}+1,3^${Math.round(n / 1.6)}+2)`).join('+')}`,
  'gcd of a huge and a small number': (n) => `gcd((15^1000)^15+1, 2^${n}+1)`,
  lcm: (n) => `lcm((2^1000)^${n}+1, (3^1000)^${n}+2) % 1000`,
  factorials: (n) => `${Array.from({ length: n }, () => 'fact(1000)').join('+')}`,
  'factorials multiplied': (n) => `${Array.from({ length: n }, () => '999!').join('*')}*0+1`,
  'signs and sums': (n) => `${Array.from({ length: n }, () => '-(9^1000)^30').join('+')}*0+1`,
  'small operations': (n) => `${Array.from({ length: n }, () => '(7*7)%5').join('+')}`,
};
const SIZES: Record<string, number[]> = {
  power: [1, 5, 10, 15, 20, 25],
  'powers summed': [1, 5, 10, 20, 30],
  product: [1, 2, 4, 6, 8, 10, 12],
  'products repeated': [1, 2, 4, 6, 8, 10],
  division: [1, 2, 4, 6, 8, 12],
  'division by a small number': [1, 5, 10, 20, 30],
  quotient: [1, 2, 4, 6, 8, 12],
  gcd: [1, 2, 3, 4, 6, 10],
  'gcd of small numbers repeated': [32, 100, 300, 600, 900],
  'gcd of a huge and a small number': [100, 500, 1000, 2000],
  lcm: [1, 2, 3, 4, 6],
  factorials: [1, 5, 10, 15, 20, 25],
  'factorials multiplied': [2, 4, 6, 8, 10, 12],
  'signs and sums': [1, 5, 10, 20],
  'small operations': [10, 20, 40],
};

function timed(expr: string): { ms: number; spent: number; refused: string | null } {
  const times: number[] = [];
  let spent = 0;
  let refused: string | null = null;
  for (let i = 0; i < REPEAT; i++) {
    const work = new Work();
    const start = process.hrtime.bigint();
    try {
      evaluate(expr, work);
      refused = null;
    } catch (err) {
      if (!(err instanceof MathError)) throw err;
      refused = err.message;
    }
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    spent = work.spent;
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, spent, refused };
}

let longest = { ms: 0, expr: '' };
let perUnit = { ns: 0, expr: '' };
console.log(`work limit: ${MATH_LIMITS.work} units\n`);
for (const [family, make] of Object.entries(FAMILIES)) {
  console.log(family);
  for (const n of SIZES[family]!) {
    const expr = make(n);
    if (expr.length > 280) continue;
    const { ms, spent, refused } = timed(expr);
    console.log(
      `  n=${String(n).padEnd(6)} ${ms.toFixed(3).padStart(9)} ms ${String(spent).padStart(10)} units ${refused ? `refused (${refused})` : ''}`,
    );
    if (ms > longest.ms) longest = { ms, expr };
    if (spent > 100_000 && (ms * 1e6) / spent > perUnit.ns) perUnit = { ns: (ms * 1e6) / spent, expr };
  }
}
console.log(`\nlongest evaluation: ${longest.ms.toFixed(3)} ms (${longest.expr})`);
console.log(`most time a unit took: ${perUnit.ns.toFixed(2)} ns (${perUnit.expr})`);
console.log(`the limit at that rate: ${((perUnit.ns * MATH_LIMITS.work) / 1e6).toFixed(1)} ms`);
