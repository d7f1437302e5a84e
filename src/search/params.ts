import { z } from 'zod';
import type { DateFilter } from '../contracts/search.js';
import { providersOffering } from '../providers/registry.js';
import type { ProviderSlug } from '../providers/types.js';

/*
 * Shared query-parameter parsing of the search endpoints (spec 4.1, docs/api.md). Each field is a zod schema over the raw query string value (so
 * the OpenAPI document can be generated from the same schemas), and errors
 * come back as `{"<field>": "<message>"}` with every invalid field at once.
 *
 * Repeated parameters (`?q=a&q=b`): the LAST value wins, everywhere (as in the
 * original service, whose framework's `QueryDict.get` returns the last value).
 */

/** The values of `engine`: the providers offering web search, in registry order. */
export const ENGINE_SLUGS: readonly ProviderSlug[] = providersOffering('web').map((p) => p.slug);
export type EngineSlug = ProviderSlug;

export const Q_MAX_LENGTH = 2000;
export const PAGE_MIN = 1;
export const PAGE_MAX = 50;

export const MESSAGES = {
  required: 'This query parameter is required.',
  qTooLong: `Ensure this value has at most ${Q_MAX_LENGTH} characters.`,
  integer: 'Must be an integer.',
  date: 'Must be d (day), w (week), m (month) or y (year).',
} as const;

const ENGINE_SET: ReadonlySet<string> = new Set(ENGINE_SLUGS);
const ENGINE_SPLIT = /[,\s]+/u;
const OFF_VALUES: ReadonlySet<string> = new Set(['off', 'false', '0', 'no']);
const SAFE_VALUES = ['on', 'off', 'true', 'false', '1', '0', 'yes', 'no'] as const;
const DATE_VALUES = ['d', 'w', 'm', 'y'] as const;
const DATE_SET: ReadonlySet<string> = new Set(DATE_VALUES);

/** Python's `str.strip()`: Unicode whitespace (JS `trim` covers the same set closely enough). */
const strip = (s: string) => s.trim();

function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** `q`: stripped, required, at most 2,000 characters. */
export const qSchema = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const q = raw === undefined ? '' : strip(raw);
    if (q === '') {
      ctx.addIssue({ code: 'custom', message: MESSAGES.required });
      return z.NEVER;
    }
    if (q.length > Q_MAX_LENGTH && codePointLength(q) > Q_MAX_LENGTH) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.qTooLong });
      return z.NEVER;
    }
    return q;
  })
  .meta({ description: `The search query (required, at most ${Q_MAX_LENGTH} characters).` });

/** The engines named by an `engine` value, deduplicated, in canonical order; or the unknown names. */
export function parseEngines(raw: string | undefined): { engines: EngineSlug[] } | { unknown: string[] } {
  const value = raw === undefined ? '' : strip(raw).toLowerCase();
  if (value === '' || value === 'all') return { engines: [...ENGINE_SLUGS] };
  const wanted = new Set<string>();
  const unknown: string[] = [];
  for (const name of value.split(ENGINE_SPLIT)) {
    if (name === '') continue;
    if (ENGINE_SET.has(name)) wanted.add(name);
    else unknown.push(name);
  }
  if (unknown.length > 0) return { unknown };
  return { engines: ENGINE_SLUGS.filter((s) => wanted.has(s)) };
}

export function unknownEnginesMessage(unknown: string[]): string {
  return `Unknown engine(s): ${unknown.join(', ')}. Valid: ${ENGINE_SLUGS.join(', ')} (or "all").`;
}

/** `engine`: comma- or space-separated slugs, or `all` (the default). */
export const engineSchema = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const parsed = parseEngines(raw);
    if ('unknown' in parsed) {
      ctx.addIssue({ code: 'custom', message: unknownEnginesMessage(parsed.unknown) });
      return z.NEVER;
    }
    return parsed.engines;
  })
  .meta({
    description: `Engines to ask: ${ENGINE_SLUGS.join(', ')} or "all", separated by commas or spaces (default all).`,
  });

/** `safe`: on unless `off`, `false`, `0` or `no`. */
export const safeSchema = z
  .string()
  .optional()
  .transform((raw) => (raw === undefined ? true : !OFF_VALUES.has(strip(raw).toLowerCase())))
  // Documented by the values a client sends (any other value is taken as on).
  .meta({ description: 'Safe search: on (default); off, false, 0 or no turn it off.', enum: [...SAFE_VALUES] });

/** `lang`: stripped and lowercased, not validated; empty means automatic. */
export const langSchema = z
  .string()
  .optional()
  .transform((raw) => (raw === undefined ? '' : strip(raw).toLowerCase()))
  .meta({ description: 'Language code (empty: automatic).' });

/** `date`: d, w, m or y (any case, stripped); absent or empty means none; anything else is refused. */
export const dateSchema = z
  .string()
  .optional()
  .transform((raw, ctx): DateFilter => {
    const v = raw === undefined ? '' : strip(raw).toLowerCase();
    if (v === '' || DATE_SET.has(v)) return v as DateFilter;
    ctx.addIssue({ code: 'custom', message: MESSAGES.date });
    return z.NEVER;
  })
  .meta({ description: 'Freshness: d (day), w (week), m (month), y (year); none by default.', enum: [...DATE_VALUES] });

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

/** `page`: an integer, clamped to 1..50 (default 1). */
export const pageSchema = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined) return PAGE_MIN;
    const n = parseInteger(raw);
    if (n === null) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.integer });
      return z.NEVER;
    }
    return Math.min(PAGE_MAX, Math.max(PAGE_MIN, n));
  })
  // Typed for the OpenAPI document and MCP by the value a client sends (the schema reads its text).
  .meta({
    description: `Page number, an integer clamped to ${PAGE_MIN}..${PAGE_MAX} (default 1).`,
    type: 'integer',
    minimum: PAGE_MIN,
    maximum: PAGE_MAX,
  });

/** Query string of GET /api/v1/web/ (and the other paged search endpoints). */
export const webQuerySchema = z.object({
  q: qSchema,
  engine: engineSchema,
  safe: safeSchema,
  lang: langSchema,
  page: pageSchema,
  date: dateSchema,
});

export type WebParams = z.output<typeof webQuerySchema>;

/** Query string of GET /api/v1/suggest/. */
export const suggestQuerySchema = z.object({ q: qSchema });

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
  const flat = flattenQuery(query, Object.keys(schema.shape));
  const result = schema.safeParse(flat);
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
