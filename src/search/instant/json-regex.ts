import { alternation, phraseSet } from './text.js';
import type { InstantHandler } from './types.js';
import { JSON_VOCABULARY, REGEX_VOCABULARY } from './vocabulary.js';

/*
 * `json`: validates and pretty-prints JSON given after a trigger ("json
 * {"a":1}", "format json [1,2]") or as the whole query (when it is a valid
 * object or array). A tool phrase alone ("json formatter") answers an empty
 * formatter. Fields: `input`, `formatted` (two-space indent), `valid`
 * (null when there was nothing to check), `error` ("" when valid).
 *
 * `regex`: a regular-expression tester; no fields beyond `type` and `query`.
 */

const J = Object.values(JSON_VOCABULARY);
const isJsonTool = phraseSet(J.flatMap((v) => v.tools));
const JSON_PREFIX = new RegExp(
  `^${alternation([...J.flatMap((v) => v.tools), ...J.flatMap((v) => v.prefixes)])}(?:\\s+json)?\\s*:?\\s*([[{].*)$`,
  'isu',
);

export function checkJson(input: string): { input: string; formatted: string; valid: boolean; error: string } {
  try {
    const value: unknown = JSON.parse(input);
    return { input, formatted: JSON.stringify(value, null, 2), valid: true, error: '' };
  } catch (err) {
    return { input, formatted: '', valid: false, error: err instanceof Error ? err.message : 'Invalid JSON' };
  }
}

function looksLikeJsonDocument(q: string): boolean {
  const first = q[0];
  const last = q[q.length - 1];
  return (first === '{' && last === '}') || (first === '[' && last === ']');
}

export const jsonHandler: InstantHandler = {
  type: 'json',
  async answer(ctx) {
    if (isJsonTool(ctx.text)) return { input: '', formatted: '', valid: null, error: '' };
    const m = JSON_PREFIX.exec(ctx.q);
    if (m) return checkJson(m[1]!.trim());
    if (looksLikeJsonDocument(ctx.q)) {
      const checked = checkJson(ctx.q);
      return checked.valid ? checked : null;
    }
    return null;
  },
};

const isRegexTrigger = phraseSet(Object.values(REGEX_VOCABULARY).flatMap((v) => v.phrases));

export const regexHandler: InstantHandler = {
  type: 'regex',
  answer: async (ctx) => (isRegexTrigger(ctx.text) ? {} : null),
};
