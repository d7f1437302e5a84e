import { randomInt } from 'node:crypto';
import { alternation, escapeRegExp, phraseSet } from './text.js';
import type { InstantHandler } from './types.js';
import { COIN_VOCABULARY, DICE_VOCABULARY, RANDOM_VOCABULARY } from './vocabulary.js';

/*
 * Chance, from Node's crypto:
 * - `coin` ("flip a coin"): `result` Heads|Tails.
 * - `dice` ("roll a die", "roll 2d6", "d20", "roll 3 dice"): `count` (1-100),
 *   `sides` (2-1000, default 6), `rolls`, `total`, `notation` (`2d6`).
 * - `random` ("random number", "random number between 1 and 10", "random 5-50"):
 *   integers `min`, `max` (default 1..100; reversed bounds are swapped), `value`.
 */

export const isCoinTrigger = phraseSet(Object.values(COIN_VOCABULARY).flatMap((v) => v.phrases));

export const coinHandler: InstantHandler = {
  type: 'coin',
  answer: async (ctx) => (isCoinTrigger(ctx.text) ? { result: randomInt(2) === 0 ? 'Heads' : 'Tails' } : null),
};

export const DICE_MAX_COUNT = 100;
export const DICE_MAX_SIDES = 1000;

const D = Object.values(DICE_VOCABULARY);
const isDicePhrase = phraseSet(D.flatMap((v) => v.phrases));
const NUMBER_WORDS = new Map<string, number>(D.flatMap((v) => Object.entries(v.numbers)));
const verb = alternation(D.flatMap((v) => v.verbs));
const dieWord = alternation(D.flatMap((v) => v.dieWords));
const numberWord = `(\\d{1,3}|${[...NUMBER_WORDS.keys()]
  .sort((a, b) => b.length - a.length)
  .map(escapeRegExp)
  .join('|')})`;
// "2d6", "d20", "roll 2d6", "roll a d20", "dice 3d8"
const NOTATION = new RegExp(`^(?:(?:${verb}|${dieWord})\\s+)?(\\d{0,3})\\s*d\\s*(\\d{1,4})$`, 'u');
// "roll 3 dice", "roll two dice", "3 dice"
const COUNTED = new RegExp(`^(?:${verb}\\s+)?${numberWord}\\s+${dieWord}$`, 'u');

const COMMON_DICE = new Set([4, 6, 8, 10, 12, 20, 100]);

export function rollDice(count: number, sides: number): Record<string, unknown> {
  const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
  return { count, sides, rolls, total: rolls.reduce((a, b) => a + b, 0), notation: `${count}d${sides}` };
}

export const diceHandler: InstantHandler = {
  type: 'dice',
  async answer(ctx) {
    if (isDicePhrase(ctx.text)) return rollDice(1, 6);
    let count: number;
    let sides = 6;
    const n = NOTATION.exec(ctx.text);
    if (n) {
      count = n[1] ? Number(n[1]) : 1;
      sides = Number(n[2]);
      // A bare "d3" is more likely a name (D3.js) than a die: only the usual dice without a verb or count.
      if (ctx.text === `d${n[2]}` && !COMMON_DICE.has(sides)) return null;
    } else {
      const c = COUNTED.exec(ctx.text);
      if (!c) return null;
      count = NUMBER_WORDS.get(c[1]!) ?? Number(c[1]);
    }
    if (count < 1 || count > DICE_MAX_COUNT || sides < 2 || sides > DICE_MAX_SIDES) return null;
    return rollDice(count, sides);
  },
};

export const RANDOM_DEFAULT = { min: 1, max: 100 };
/** randomInt's range limit: max - min < 2^48. */
const RANDOM_SPAN = 2 ** 48 - 1;

const R = Object.values(RANDOM_VOCABULARY);
const isRandomPhrase = phraseSet(R.flatMap((v) => v.phrases).filter((p) => p !== 'random'));
const randomWord = alternation(R.flatMap((v) => v.phrases));
const between = alternation(R.flatMap((v) => v.between).filter(Boolean));
const and = alternation(R.flatMap((v) => v.and));
const INT = '(-?\\d{1,15})';
const RANGE = new RegExp(`^${randomWord}\\s+(?:${between}\\s+)?${INT}\\s*${and}\\s*${INT}$`, 'u');

export const randomHandler: InstantHandler = {
  type: 'random',
  async answer(ctx) {
    let { min, max } = RANDOM_DEFAULT;
    if (!isRandomPhrase(ctx.text)) {
      const m = RANGE.exec(ctx.text);
      if (!m) return null;
      min = Number(m[1]);
      max = Number(m[2]);
      if (min > max) [min, max] = [max, min];
      if (max - min > RANDOM_SPAN || !Number.isSafeInteger(min) || !Number.isSafeInteger(max)) return null;
    }
    return { min, max, value: randomInt(min, max + 1) };
  },
};
