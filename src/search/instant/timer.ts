import { alternation, escapeRegExp, phraseSet } from './text.js';
import type { InstantHandler } from './types.js';
import { TIMER_VOCABULARY } from './vocabulary.js';

/*
 * `timer`: a stopwatch ("stopwatch") or a countdown ("timer 5 minutes",
 * "10 min timer", "set a timer for 1h30m", "timer 1:30"; a bare number is
 * minutes; "timer" alone is five minutes). Fields: `mode`
 * (stopwatch|timer), `seconds` (0 for a stopwatch; at most 100 hours).
 */

export const TIMER_DEFAULT_SECONDS = 300;
export const TIMER_MAX_SECONDS = 100 * 3600;

const V = Object.values(TIMER_VOCABULARY);
const isStopwatch = phraseSet(V.flatMap((v) => v.stopwatch));
const isTimer = phraseSet(V.flatMap((v) => v.timer));
const UNITS = new Map<string, number>(V.flatMap((v) => Object.entries(v.units)));
const timerWord = alternation(V.flatMap((v) => v.timer));
const connector = alternation(V.flatMap((v) => v.connectors));
const unit = `(?:${[...UNITS.keys()]
  .sort((a, b) => b.length - a.length)
  .map(escapeRegExp)
  .join('|')})`;
const DURATION = `((?:\\d+(?:\\.\\d+)?\\s*${unit}(?![a-z])[\\s,]*(?:and\\s+)?)+|\\d{1,3}:\\d{2}(?::\\d{2})?|\\d+(?:\\.\\d+)?)`;
const AFTER = new RegExp(`^${timerWord}(?:\\s+${connector})?\\s+${DURATION}$`, 'u');
const BEFORE = new RegExp(`^${DURATION}[\\s-]*${timerWord}$`, 'u');
const PART = new RegExp(`(\\d+(?:\\.\\d+)?)\\s*(${unit})(?![a-z])`, 'gu');

/** Seconds of a duration ("1h 30m", "90 seconds", "1:30" = 1 min 30 s, "5" = 5 minutes), or null. */
export function parseDuration(s: string): number | null {
  const d = s.trim();
  if (/^\d+(?:\.\d+)?$/.test(d)) return Math.round(Number(d) * 60);
  const clock = /^(\d{1,3}):(\d{2})(?::(\d{2}))?$/.exec(d);
  if (clock) {
    const [a, b, c] = [Number(clock[1]), Number(clock[2]), clock[3] === undefined ? null : Number(clock[3])];
    if (b > 59 || (c !== null && c > 59)) return null;
    return c === null ? a * 60 + b : a * 3600 + b * 60 + c;
  }
  let total = 0;
  let found = false;
  for (const m of d.matchAll(PART)) {
    const factor = UNITS.get(m[2]!);
    if (factor === undefined) return null;
    total += Number(m[1]) * factor;
    found = true;
  }
  return found ? Math.round(total) : null;
}

export const timerHandler: InstantHandler = {
  type: 'timer',
  async answer(ctx) {
    if (isStopwatch(ctx.text)) return { mode: 'stopwatch', seconds: 0 };
    if (isTimer(ctx.text)) return { mode: 'timer', seconds: TIMER_DEFAULT_SECONDS };
    const m = AFTER.exec(ctx.text) ?? BEFORE.exec(ctx.text);
    if (!m) return null;
    const seconds = parseDuration(m[1]!);
    if (seconds === null || seconds <= 0 || seconds > TIMER_MAX_SECONDS) return null;
    return { mode: 'timer', seconds };
  },
};
