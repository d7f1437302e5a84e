import { phraseSet, prefixMatcher, suffixMatcher } from './text.js';
import type { InstantHandler } from './types.js';
import { TIMESTAMP_VOCABULARY } from './vocabulary.js';

/*
 * `timestamp`: the current Unix time ("unix timestamp"), or a given one
 * converted ("unix 1700000000", "1700000000 to date"; 13-digit values are
 * read as milliseconds), or a date turned into one ("2024-01-01 to unix";
 * dates without an offset are UTC). Fields: `epoch` (seconds), `given`
 * (whether the query gave the time), `utc` (`2023-11-14 22:13:20 UTC`),
 * `utc_full` (`Tuesday, 14 November 2023 22:13:20 UTC`), `iso` (`2023-11-14T22:13:20Z`).
 */

const T = Object.values(TIMESTAMP_VOCABULARY);
const isNow = phraseSet(T.flatMap((v) => v.nowPhrases));
const afterPrefix = prefixMatcher(T.flatMap((v) => v.prefixes));
const beforeSuffix = suffixMatcher(T.flatMap((v) => v.suffixes));

/** Years 1..9999, the range every field can show. */
const MIN_EPOCH = -62135596800;
const MAX_EPOCH = 253402300799;

const INTEGER = /^[+-]?\d{1,16}$/;
const DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?\s*(z|utc|gmt|[+-]\d{2}:?\d{2})?$/i;

/** Epoch seconds written in `s` (seconds, milliseconds, or an ISO date), or null. */
export function parseEpoch(s: string): number | null {
  const v = s.trim().replace(/,/g, '');
  if (INTEGER.test(v)) {
    let n = Number(v);
    if (Math.abs(n) > MAX_EPOCH) n = Math.floor(n / 1000);
    return n >= MIN_EPOCH && n <= MAX_EPOCH ? n : null;
  }
  const m = DATE.exec(v);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', zone] = m;
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  if (!Number.isFinite(ms)) return null;
  const check = new Date(ms);
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59) {
    return null;
  }
  if (Number(y) < 100) ms = new Date(ms).setUTCFullYear(Number(y));
  if (zone && /^[+-]/.test(zone)) {
    const z = zone.replace(':', '');
    const sign = z[0] === '-' ? -1 : 1;
    ms -= sign * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5))) * 60_000;
  }
  return Math.floor(ms / 1000);
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
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

/** `epoch` (years 1..9999 only: parseEpoch's range, which toISOString writes with four digits) described. */
export function describeEpoch(epoch: number, given: boolean): Record<string, unknown> {
  const d = new Date(epoch * 1000);
  const plainIso = d.toISOString().slice(0, 19);
  const time = plainIso.slice(11, 19);
  return {
    epoch,
    given,
    utc: `${plainIso.slice(0, 10)} ${time} UTC`,
    utc_full: `${WEEKDAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${time} UTC`,
    iso: `${plainIso}Z`,
  };
}

export const timestampHandler: InstantHandler = {
  type: 'timestamp',
  async answer(ctx) {
    if (isNow(ctx.text)) return describeEpoch(Math.floor(ctx.now.getTime() / 1000), false);
    const given = afterPrefix(ctx.q) ?? beforeSuffix(ctx.q);
    if (given === null) return null;
    const epoch = parseEpoch(given);
    return epoch === null ? null : describeEpoch(epoch, true);
  },
};
