import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/api-keys.js';
import { createUser } from '../../src/auth/users.js';
import { MATH_LIMITS, MathError, Work, evaluate, mathHandler } from '../../src/search/instant/math.js';
import type { InstantContext } from '../../src/search/instant/types.js';
import { parseInteger } from '../../src/search/query-string.js';
import { type TestDatabase, createTestDatabase } from '../helpers/db.js';
import { type RunningApp, startApp } from '../security/support.js';

/*
 * The maths evaluator's work limit: every integer operation is charged before it runs, by the
 * sizes of its operands, and an expression whose charges pass the limit is refused (no answer)
 * before the costly operation runs. Checked by counting, not by timing: the charges are
 * deterministic, the limit is enforced at exactly the charge that passes it, and the expressions
 * that stalled the server (a gcd of two numbers of 100 000 bits) are refused. Then once end to
 * end: /up keeps answering while such queries arrive in parallel (how soon is bench/math-work.ts's
 * to measure: the work limit in time).
 */

/** The outcome of an evaluation under a limit: its result, or the reason it was refused. */
function outcome(expr: string, limit: number): { result?: string; refused?: string; spent: number } {
  const work = new Work(limit);
  try {
    return { result: evaluate(expr, work).result, spent: work.spent };
  } catch (err) {
    if (!(err instanceof MathError)) throw err;
    return { refused: err.message, spent: work.spent };
  }
}

/** A Work with the usual limit that records each charge. */
function recordingWork(): { work: Work; charges: number[] } {
  const work = new Work();
  const charges: number[] = [];
  const charge = work.charge.bind(work);
  work.charge = (units: number) => {
    charges.push(units);
    charge(units);
  };
  return { work, charges };
}

/** Integers of every size the bounds allow, from powers of powers (the exponent limit is 1000). */
const bigInteger = fc.oneof(
  fc.integer({ min: 0, max: 10 ** 9 }).map(String),
  fc.constantFrom('7', '2', '15', '13', '999', '0xffffffffffff', `${'9'.repeat(60)}`),
  fc
    .record({
      base: fc.constantFrom(2, 3, 7, 13, 15, 99),
      exponent: fc.integer({ min: 1, max: 1000 }),
      outer: fc.integer({ min: 1, max: 40 }),
      add: fc.integer({ min: 0, max: 3 }),
    })
    .map(({ base, exponent, outer, add }) => `((${base}^${exponent})^${outer}+${add})`),
  fc.integer({ min: 0, max: 1000 }).map((n) => `fact(${n})`),
  fc.integer({ min: 0, max: 1000 }).map((n) => `${n}!`),
);

/** Hostile expressions: the costly operations on the large integers, nested and repeated. */
const hostile: fc.Arbitrary<string> = fc
  .letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      bigInteger,
      fc
        .tuple(tie('expr'), fc.constantFrom('+', '-', '*', '/', '%', '^'), tie('expr'))
        .map(([a, op, b]) => `(${a}${op}${b})`),
      fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `gcd(${a},${b})`),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([a, b, c]) => `lcm(${a},${b},${c})`),
      fc.tuple(tie('expr'), fc.integer({ min: 2, max: 8 })).map(([a, n]) => Array(n).fill(a).join('+')),
      tie('expr').map((a) => `-${a}`),
      tie('expr').map((a) => `abs(${a})`),
    ),
  }))
  .expr.filter((e) => e.length <= 280);

/** Far more than the usual limit, still short enough to run: what an expression would spend unrefused. */
const AMPLE = 5 * MATH_LIMITS.work;

describe('maths: the work limit', () => {
  it('charges every evaluation deterministically and refuses it at exactly the charge that passes the limit', () => {
    fc.assert(
      fc.property(hostile, (expr) => {
        const ample = outcome(expr, AMPLE);
        if (ample.refused !== undefined) {
          // refused by a bound (work, size, overflow, division by zero): under the usual limit too
          expect(outcome(expr, MATH_LIMITS.work).refused).toBeDefined();
          return;
        }
        // the same charges every time, and just enough work allowed gives the same answer
        expect(outcome(expr, ample.spent)).toEqual(ample);
        if (ample.spent > 0) expect(outcome(expr, ample.spent - 1).refused).toBe('too much work');
        // under the usual limit: answered when within it, refused when not
        const usual = outcome(expr, MATH_LIMITS.work);
        if (ample.spent <= MATH_LIMITS.work) expect(usual).toEqual(ample);
        else expect(usual.refused).toBe('too much work');
      }),
      { numRuns: 300 },
    );
  });

  it('answers no hostile expression with anything but a number or no answer, and never runs past the limit', async () => {
    const ctx = (q: string) => ({ q, text: q }) as unknown as InstantContext;
    await fc.assert(
      fc.asyncProperty(hostile, async (expr) => {
        const { work, charges } = recordingWork();
        try {
          evaluate(expr, work);
          expect(work.spent).toBeLessThanOrEqual(MATH_LIMITS.work);
        } catch (err) {
          expect(err).toBeInstanceOf(MathError);
        }
        // Every charge but a refused last one was within the limit: the refused operation never ran.
        const ran = charges.slice(0, work.spent > MATH_LIMITS.work ? -1 : undefined);
        expect(ran.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(MATH_LIMITS.work);
        const answer = await mathHandler.answer(ctx(expr));
        if (answer !== null) expect(typeof answer.raw).toBe('number');
      }),
      { numRuns: 300 },
    );
  });

  it('refuses the gcd and lcm of huge numbers before running them, as the queries that stalled the server', () => {
    const stall = 'gcd((15^1000)^25+1,(13^1000)^26+2)';
    const cheapPowers = 'gcd((2^1000)^30+1,(3^1000)^19+2)';
    for (const expr of [
      stall,
      Array(7).fill(stall).join(''),
      Array(7).fill(stall).join('+'),
      cheapPowers,
      Array(7).fill(cheapPowers).join('+'),
      `lcm(${cheapPowers},2,3)`,
      `lcm((2^1000)^30+1,(3^1000)^19+2)`,
    ]) {
      expect(expr.length).toBeLessThanOrEqual(280);
      const { work, charges } = recordingWork();
      expect(() => evaluate(expr, work), expr).toThrow('too much work');
      expect(
        charges.slice(0, -1).reduce((a, b) => a + b, 0),
        expr,
      ).toBeLessThanOrEqual(MATH_LIMITS.work);
    }
    // the gcd itself is priced past the whole limit, before a step of it runs
    const { work, charges } = recordingWork();
    expect(() => evaluate(cheapPowers, work)).toThrow('too much work');
    expect(charges.at(-1)).toBeGreaterThan(MATH_LIMITS.work);
  });

  it('still answers maths with large integers along the way', () => {
    for (const [expr, result] of [
      ['(2^1000)^10 / (2^999)^10', '1,024'],
      ['2^1000 / 2^990', '1,024'],
      ['1000! / 999!', '1,000'],
      ['gcd(2^1000, 6^500) / 2^490', '1,024'],
      ['lcm(4, 6, 10)', '60'],
      ['(3^1000)^20 % 1000', '1'],
      ['fact(300) / fact(298)', '89,700'],
      ['gcd(fact(200), 2^300) / 2^190', '128'],
    ] as const) {
      expect(outcome(expr, MATH_LIMITS.work), expr).toMatchObject({ result });
    }
  });
});

describe('integer parameters', () => {
  it('reads a long run of Unicode digits with each distinct digit looked up once', () => {
    const arabicIndic = (d: number) => String.fromCodePoint(0x660 + d);
    expect(parseInteger(arabicIndic(1).repeat(100_000))).toBe(1e12);
    expect(parseInteger(`${arabicIndic(0).repeat(100_000)}${arabicIndic(7)}`)).toBe(7);
    // Mathematical digits: five blocks of ten in one run
    expect(parseInteger(`${String.fromCodePoint(0x1d7ce + 13)}${String.fromCodePoint(0x1d7ce + 49)}`)).toBe(39);
    expect(parseInteger(`-${'٠'.repeat(50_000)}_${'٤'.repeat(1)}`)).toBe(-4);
  });
});

describe('GET /api/v1/instant/ under hostile maths', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let apiKey: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const user = await createUser(db.pool, { username: 'maths', password: 'maths password' });
    ({ key: apiKey } = await issueApiKey(db.pool, user.id));
    server = await startApp(db, { API_THROTTLE_BURST: '100000/min', API_THROTTLE_SUSTAINED: '1000000/day' });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('keeps /up answering while hostile queries run in parallel, each answered with no answer', async () => {
    const stall = 'gcd((15^1000)^25+1,(13^1000)^26+2)';
    const queries = [
      Array(7).fill(stall).join(''),
      'gcd((2^1000)^4+1, (3^1000)^4+2)+gcd((2^1000)^4+1, (3^1000)^4+2)',
      Array(12).fill('fact(1000)').join('+'),
      'lcm((2^1000)^3+1, (3^1000)^3+2, (5^1000)^2+3)',
    ];
    let running = true;
    const answers: (number | null)[] = [];
    const attacker = async (i: number) => {
      while (running) {
        const q = queries[i % queries.length]!;
        const res = await fetch(`${server.base}/api/v1/instant/?${new URLSearchParams({ q })}`, {
          headers: { authorization: `Api-Key ${apiKey}` },
        });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { answer: { raw: number } | null };
        answers.push(body.answer?.raw ?? null);
      }
    };
    const attackers = Array.from({ length: 4 }, (_, i) => attacker(i));
    try {
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${server.base}/up`);
        expect(await res.text()).toBe('OK');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      running = false;
      await Promise.all(attackers);
    }
    expect(answers.length).toBeGreaterThan(8);
    // Each refused by the work limit before its costly operation ran (counted above, not timed).
    expect(answers.every((a) => a === null)).toBe(true);
  });
});
