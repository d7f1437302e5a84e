import { randomInt, randomUUID } from 'node:crypto';
import { alternation, phraseSet } from './text.js';
import type { InstantHandler } from './types.js';
import { PASSWORD_VOCABULARY, UUID_VOCABULARY } from './vocabulary.js';

/*
 * Generators from Node's crypto: `uuid` (`value` and five `values`, version 4)
 * and `password` (`value`, `length`: 16 unless the query asks for 4..128).
 */

const isUuidTrigger = phraseSet(Object.values(UUID_VOCABULARY).flatMap((v) => v.phrases));

export const uuidHandler: InstantHandler = {
  type: 'uuid',
  async answer(ctx) {
    if (!isUuidTrigger(ctx.text)) return null;
    const values = Array.from({ length: 5 }, () => randomUUID());
    return { value: values[0], values };
  },
};

export const PASSWORD_DEFAULT_LENGTH = 16;
export const PASSWORD_MIN_LENGTH = 4;
export const PASSWORD_MAX_LENGTH = 128;

const LOWER = 'abcdefghijkmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
const DIGITS = '23456789';
const SYMBOLS = '!@#$%^&*-_=+?';
const ALL = LOWER + UPPER + DIGITS + SYMBOLS;

/** A password of `length` characters with at least one lower, upper, digit and symbol (unambiguous glyphs only). */
export function generatePassword(length: number): string {
  const pick = (set: string) => set[randomInt(set.length)]!;
  const chars = [pick(LOWER), pick(UPPER), pick(DIGITS), pick(SYMBOLS)];
  while (chars.length < length) chars.push(pick(ALL));
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.slice(0, length).join('');
}

const PW = Object.values(PASSWORD_VOCABULARY);
const isPasswordTrigger = phraseSet(PW.flatMap((v) => v.phrases));
const phrase = alternation(PW.flatMap((v) => v.phrases));
const units = alternation(PW.flatMap((v) => v.lengthUnits));
const connectors = alternation(PW.flatMap((v) => v.connectors));
// "password 24", "password of 24 characters", "password with 24 chars"
const LENGTH_AFTER = new RegExp(`^${phrase}\\s+(?:${connectors}\\s+)?(\\d{1,4})(?:\\s*${units})?$`, 'u');
// "24 character password", "generate a 24-char password"
const LENGTH_BEFORE = new RegExp(
  `^(?:(?:generate|create|make)(?:\\s+an?)?\\s+)?(\\d{1,4})(?:[\\s-]*${units})?\\s+${phrase}$`,
  'u',
);

export const passwordHandler: InstantHandler = {
  type: 'password',
  async answer(ctx) {
    let length = PASSWORD_DEFAULT_LENGTH;
    if (!isPasswordTrigger(ctx.text)) {
      const m = LENGTH_AFTER.exec(ctx.text) ?? LENGTH_BEFORE.exec(ctx.text);
      if (!m) return null;
      length = Number(m[1]);
      if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) return null;
    }
    return { value: generatePassword(length), length };
  },
};
