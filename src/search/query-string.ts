import type { z } from 'zod';

/*
 * How a query string is read (docs/api.md): Fastify's parsed query flattened
 * to one string per field, Python's `int()` for integers, and a zod object
 * schema's errors as `{"<field>": "<message>"}`, every invalid field at once.
 * The schemas themselves are in queries.ts.
 *
 * Repeated parameters (`?q=a&q=b`): the LAST value wins, everywhere (as in the
 * original service, whose framework's `QueryDict.get` returns the last value).
 */

/** Python's `str.strip()`: Unicode whitespace (JS `trim` covers the same set closely enough). */
export const strip = (s: string) => s.trim();

const DECIMAL_DIGIT = /^\p{Nd}$/u;

/** Values of the non-ASCII digits met so far: a few hundred code points at most, each found once. */
const DIGIT_VALUES = new Map<number, number>();

/** The value 0-9 of a Unicode decimal digit (category Nd runs are blocks of ten starting at zero). */
function digitValue(ch: string): number {
  const cp = ch.codePointAt(0)!;
  if (cp >= 0x30 && cp <= 0x39) return cp - 0x30;
  const known = DIGIT_VALUES.get(cp);
  if (known !== undefined) return known;
  let start = cp;
  while (start > 0 && cp - start < 100 && DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  const value = (cp - start) % 10;
  DIGIT_VALUES.set(cp, value);
  return value;
}

const INTEGER = /^[+-]?\p{Nd}+(?:_\p{Nd}+)*$/u;

/**
 * Python's `int(str)`: surrounding whitespace, a sign, `_` between digits and
 * Unicode decimal digits are accepted. Returns null when not an integer.
 * Magnitudes are saturated (only the clamped value matters).
 */
export function parseInteger(raw: string): number | null {
  const s = strip(raw);
  if (!INTEGER.test(s)) return null;
  let negative = false;
  let value = 0;
  for (const ch of s) {
    if (ch === '-') negative = true;
    else if (ch === '+' || ch === '_') continue;
    // Once saturated, no further digit can change the value.
    else if (value < 1e12) value = Math.min(value * 10 + digitValue(ch), 1e12);
  }
  return negative ? -value : value;
}

export type FieldErrors = Record<string, string>;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/**
 * Fastify's parsed query string as a flat object of strings: a repeated
 * parameter keeps its last value, anything that is not a string is dropped.
 */
export function flattenQuery(query: unknown, fields: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (query === null || typeof query !== 'object') return out;
  const q = query as Record<string, unknown>;
  for (const field of fields) {
    if (!Object.hasOwn(q, field)) continue;
    let v = q[field];
    if (Array.isArray(v)) v = v[v.length - 1];
    if (typeof v === 'string') out[field] = v;
  }
  return out;
}

/**
 * Validates a query string against an object schema of the fields above.
 * Errors: one message per invalid field (the first issue of each), in schema order.
 */
export function parseQuery<S extends z.ZodObject>(schema: S, query: unknown): ParseResult<z.output<S>> {
  return parseFields(schema, flattenQuery(query, Object.keys(schema.shape)));
}

/**
 * Validates the schema's fields of an object whose values keep their types (a JSON body's lists,
 * numbers and booleans), with the errors of parseQuery.
 */
export function parseFields<S extends z.ZodObject>(schema: S, fields: unknown): ParseResult<z.output<S>> {
  const picked: Record<string, unknown> = {};
  if (fields !== null && typeof fields === 'object') {
    for (const field of Object.keys(schema.shape)) {
      const v = (fields as Record<string, unknown>)[field];
      if (Object.hasOwn(fields, field) && v !== null) picked[field] = v;
    }
  }
  const result = schema.safeParse(picked);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? 'detail');
    if (!(field in errors)) errors[field] = issue.message;
  }
  // schema order, whatever order zod reported them in
  const ordered: FieldErrors = {};
  for (const field of Object.keys(schema.shape)) if (field in errors) ordered[field] = errors[field]!;
  for (const field of Object.keys(errors)) if (!(field in ordered)) ordered[field] = errors[field]!;
  return { ok: false, errors: ordered };
}
