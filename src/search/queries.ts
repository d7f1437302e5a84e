import { z } from 'zod';
import type { DateFilter } from '../contracts/search.js';
import { providersOffering } from '../providers/registry.js';
import type { ProviderSlug } from '../providers/types.js';
import { round6 } from './place.js';
import { type FieldErrors, parseInteger, strip } from './query-string.js';

/*
 * The request schemas of the /api/v1/ endpoints (spec 4.1, docs/api.md), in
 * one place: the routes validate with them, MCP's tools take their input side
 * as input schemas, the OpenAPI document is generated from them, and the
 * SearXNG-compatible API reads its `q` with the same field. Each field is a
 * zod schema over the raw query string value; errors come back as
 * `{"<field>": "<message>"}` with every invalid field at once (query-string.ts).
 * The response schemas are in response-schemas.ts.
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

/** The query string of an endpoint that takes no parameter (GET /api/v1/translate/languages/, MCP's status). */
export const noQuerySchema = z.object({});

/** Query string of GET /api/v1/images/ (no date: no image provider filters by date). */
export const imagesQuerySchema = z.object({
  q: qSchema,
  engine: engineSchema,
  safe: safeSchema,
  lang: langSchema,
  page: pageSchema,
});

export type ImagesParams = z.output<typeof imagesQuerySchema>;

/** Query string of GET /api/v1/instant/. */
export const instantQuerySchema = z.object({ q: qSchema, lang: langSchema });

/** Query string of GET /api/v1/cards/: checked in the order q, lang, safe, engine. */
export const cardsQuerySchema = z.object({
  q: qSchema,
  lang: langSchema,
  safe: safeSchema,
  engine: engineSchema,
});

export type CardsParams = z.output<typeof cardsQuerySchema>;

/** A stripped text field ("" when absent). */
const stripped = z
  .string()
  .optional()
  .transform((raw) => (raw === undefined ? '' : raw.trim()));

/** Whether `s` has more than `max` characters (code points). */
function longerThan(s: string, max: number): boolean {
  return s.length > max && [...s].length > max;
}

// GET /api/v1/images/similar/ ---------------------------------------------------------------------

export const SEED_REQUIRED = 'Provide q (the image caption) and/or query (a fallback seed).';

/** A trailing " - Site name" segment: whitespace, one separator, whitespace, 1-40 non-separator characters. */
const SOURCE_SUFFIX = /\s+[|·–—-]\s+[^|·–—-]{1,40}$/u;

const collapse = (s: string) => s.split(/\s+/u).filter(Boolean).join(' ');

/** A caption reduced to its subject: "Golden Retriever - American Kennel Club" -> "Golden Retriever". */
export function cleanCaption(caption: string): string {
  const collapsed = collapse(caption);
  const trimmed = collapsed.replace(SOURCE_SUFFIX, '').trim();
  return [...trimmed].length >= 2 ? trimmed : collapsed;
}

/** The seed of a similar-images search: from the caption, else from `query`; "" when neither has text. */
export function similarSeed(caption: string, query: string): string {
  return cleanCaption(caption) || collapse(query);
}

/** A stripped text parameter of at most Q_MAX_LENGTH characters ("" when absent). */
const seedText = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    const v = raw === undefined ? '' : raw.trim();
    if (longerThan(v, Q_MAX_LENGTH)) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.qTooLong });
      return z.NEVER;
    }
    return v;
  });

/** Query string of GET /api/v1/images/similar/ (a seed is required: the caption or the page query). */
export const similarImagesQuerySchema = z
  .object({
    q: seedText.meta({ description: 'The caption of the opened image (the primary seed).' }),
    query: seedText.meta({ description: 'The page query (the seed when there is no caption).' }),
    exclude_url: stripped.meta({ description: 'A result URL to leave out (the opened image).' }),
    engine: engineSchema,
    safe: safeSchema,
    lang: langSchema,
  })
  // Checked even when another field is invalid, so the 400 names every problem.
  .refine((v) => typeof v.q !== 'string' || typeof v.query !== 'string' || similarSeed(v.q, v.query) !== '', {
    path: ['q'],
    message: SEED_REQUIRED,
    when: () => true,
  });

export type SimilarImagesParams = z.output<typeof similarImagesQuerySchema>;

// GET /api/v1/maps/ -------------------------------------------------------------------------------

export const LIMIT_DEFAULT = 10;
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 50;
/** The original's message, keyed here by the field that is wrong. */
export const COORDINATES_MESSAGE = 'lat and lon must be valid coordinates.';

/** Python's float() syntax for decimal numbers (underscores between digits allowed); no nan/inf. */
const DECIMAL = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;

/** A coordinate within ±`max`, or null when it is not a finite number in range. */
export function parseCoordinate(raw: string, max: number): number | null {
  if (!DECIMAL.test(raw)) return null;
  const n = Number(raw.replaceAll('_', ''));
  return Number.isFinite(n) && Math.abs(n) <= max ? n : null;
}

/** What a maps request asks for (reverse coordinates rounded to 6 places, as the places are). */
export type MapsRequest =
  | { mode: 'geocode'; q: string; limit: number; lang: string }
  | { mode: 'reverse'; lat: number; lon: number; name: string; lang: string };

type MapsFields = { q: string; limit?: string | undefined; lang: string; lat: string; lon: string; label: string };

/**
 * The request the fields describe, or one message per invalid field (in schema order). Reverse mode
 * when `lat` and `lon` are both given (coordinates win over `q`), else geocode mode.
 */
export function interpretMaps(
  f: MapsFields,
): { ok: true; request: MapsRequest } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  if (longerThan(f.q, Q_MAX_LENGTH)) errors.q = MESSAGES.qTooLong;
  if (f.lat !== '' && f.lon !== '') {
    const lat = parseCoordinate(f.lat, 90);
    const lon = parseCoordinate(f.lon, 180);
    if (lat === null) errors.lat = COORDINATES_MESSAGE;
    if (lon === null) errors.lon = COORDINATES_MESSAGE;
    if (longerThan(f.label, Q_MAX_LENGTH)) errors.label = MESSAGES.qTooLong;
    if (lat === null || lon === null || Object.keys(errors).length > 0) return { ok: false, errors };
    return {
      ok: true,
      request: { mode: 'reverse', lat: round6(lat), lon: round6(lon), name: f.label || f.q, lang: f.lang },
    };
  }
  if (f.q === '') errors.q = MESSAGES.required;
  let limit = LIMIT_DEFAULT;
  if (f.limit !== undefined) {
    const n = parseInteger(f.limit);
    if (n === null) errors.limit = MESSAGES.integer;
    else limit = Math.min(LIMIT_MAX, Math.max(LIMIT_MIN, n));
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, request: { mode: 'geocode', q: f.q, limit, lang: f.lang } };
}

/** Query string of GET /api/v1/maps/ (the checks depend on the mode, so they run over the whole object). */
export const mapsQuerySchema = z
  .object({
    q: stripped.meta({
      description: `Place to look up (required in geocode mode, at most ${Q_MAX_LENGTH} characters); names the place in reverse mode.`,
    }),
    limit: z
      .string()
      .optional()
      .meta({
        description: `Geocode mode: places to return, an integer clamped to ${LIMIT_MIN}..${LIMIT_MAX} (default ${LIMIT_DEFAULT}).`,
        type: 'integer',
        minimum: LIMIT_MIN,
        maximum: LIMIT_MAX,
      }),
    lang: langSchema,
    lat: stripped.meta({
      description: 'Reverse mode (with lon): latitude, -90 to 90.',
      type: 'number',
      minimum: -90,
      maximum: 90,
    }),
    lon: stripped.meta({
      description: 'Reverse mode (with lat): longitude, -180 to 180.',
      type: 'number',
      minimum: -180,
      maximum: 180,
    }),
    label: stripped.meta({ description: 'Reverse mode: the name of the place (default: q).' }),
  })
  .superRefine((fields, ctx) => {
    const r = interpretMaps(fields);
    if (r.ok) return;
    for (const [field, message] of Object.entries(r.errors)) ctx.addIssue({ code: 'custom', path: [field], message });
  });

export type MapsParams = z.output<typeof mapsQuerySchema>;

// GET|POST /api/v1/translate/ ---------------------------------------------------------------------

export const TEXT_MAX_LENGTH = 5000;

export const TRANSLATE_MESSAGES = {
  text: 'This parameter is required (the text to translate).',
  target: 'This parameter is required (target language code).',
  tooLong: `Ensure this value has at most ${TEXT_MAX_LENGTH} characters.`,
  notString: 'Must be a string.',
  body: 'The request body must be a JSON object or form-encoded fields.',
} as const;

const TRANSLATE_FIELDS = ['q', 'text', 'target', 'source'] as const;

/**
 * A language code as translation backends name languages: ISO 639 (`en`, `ast`), with up to three
 * subtags (`pt-BR`, `zh-Hans`, `zh_TW`). Anything else never reaches the backend, which would refuse
 * it in words that are not a refusal Sift can read.
 */
const LANGUAGE_CODE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8}){0,3}$/;
export const LANGUAGE_CODE_MESSAGE = 'Must be a language code, such as en, pt-BR or zh-Hans.';

/**
 * Fields of GET (query string) and POST (form or JSON body) /api/v1/translate/: `q` (or `text`)
 * and `target` required, `source` default `auto`; the text at most 5,000 characters (400 naming
 * the field it came from); `target` and `source` language codes (LANGUAGE_CODE; `source` may be
 * `auto`), passed on as given (stripped).
 */
export const translateSchema = z
  .object({
    q: stripped.meta({ description: `The text to translate (or \`text\`), at most ${TEXT_MAX_LENGTH} characters.` }),
    text: stripped.meta({ description: 'The text to translate, when `q` is not given.' }),
    target: stripped.meta({ description: 'Target language code (required).' }),
    source: stripped.meta({ description: 'Source language code, or `auto` (the default) to detect it.' }),
  })
  .superRefine((f, ctx) => {
    if (f.q === '' && f.text === '') ctx.addIssue({ code: 'custom', path: ['q'], message: TRANSLATE_MESSAGES.text });
    else if (f.q !== '' ? longerThan(f.q, TEXT_MAX_LENGTH) : longerThan(f.text, TEXT_MAX_LENGTH)) {
      ctx.addIssue({ code: 'custom', path: [f.q !== '' ? 'q' : 'text'], message: TRANSLATE_MESSAGES.tooLong });
    }
    if (f.target === '') ctx.addIssue({ code: 'custom', path: ['target'], message: TRANSLATE_MESSAGES.target });
    else if (!LANGUAGE_CODE.test(f.target)) {
      ctx.addIssue({ code: 'custom', path: ['target'], message: LANGUAGE_CODE_MESSAGE });
    }
    if (f.source !== '' && f.source.toLowerCase() !== 'auto' && !LANGUAGE_CODE.test(f.source)) {
      ctx.addIssue({ code: 'custom', path: ['source'], message: `${LANGUAGE_CODE_MESSAGE.slice(0, -1)}, or auto.` });
    }
  });

export type TranslateParams = z.output<typeof translateSchema>;

/**
 * The shape of a POST body before the schema: a JSON object or form fields
 * whose values are strings (a repeated form field is a list of strings; null
 * counts as absent). Anything else is a 400 naming what is wrong.
 */
export function translateBodyErrors(raw: unknown): FieldErrors | null {
  if (raw === undefined) return null;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { detail: TRANSLATE_MESSAGES.body };
  const errors: FieldErrors = {};
  for (const field of TRANSLATE_FIELDS) {
    if (!Object.hasOwn(raw, field)) continue;
    const v = (raw as Record<string, unknown>)[field];
    const ok = v === null || typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
    if (!ok) errors[field] = TRANSLATE_MESSAGES.notString;
  }
  return Object.keys(errors).length > 0 ? errors : null;
}

/** `null` values of a JSON body are absent (the schema takes strings only). */
export function translateInput(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const field of TRANSLATE_FIELDS) {
    const v = (raw as Record<string, unknown>)[field];
    if (Object.hasOwn(raw, field) && v !== null) out[field] = v;
  }
  return out;
}

// GET|POST /api/v1/contents/ and web search's `contents` ------------------------------------------

export const CONTENTS_MAX_CHARS_MIN = 100;
export const CONTENTS_MAX_CHARS_MAX = 200_000;
export const CONTENTS_MAX_CHARS_DEFAULT = 20_000;
export const CONTENTS_URLS_MAX = 10;
export const WEB_CONTENTS_MAX = 5;

export const CONTENTS_MESSAGES = {
  url: 'This query parameter is required (an absolute http or https URL).',
  format: 'Must be markdown or text.',
  maxChars: `Must be an integer from ${CONTENTS_MAX_CHARS_MIN} to ${CONTENTS_MAX_CHARS_MAX}.`,
  fresh: 'Must be true or false.',
  urls: `Must be a list of 1 to ${CONTENTS_URLS_MAX} URLs (strings).`,
  body: 'The request body must be a JSON object.',
  webContents: `Must be an integer from 0 to ${WEB_CONTENTS_MAX}.`,
} as const;

const BOOLEAN_TRUE: ReadonlySet<string> = new Set(['true', '1', 'yes', 'on']);
const BOOLEAN_FALSE: ReadonlySet<string> = new Set(['false', '0', 'no', 'off', '']);

/** An integer field of a query string or a JSON body, within bounds (a number or its text). */
function boundedInteger(min: number, max: number, fallback: number, message: string) {
  return z
    .unknown()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw === '') return fallback;
      const n =
        typeof raw === 'number'
          ? Number.isInteger(raw)
            ? raw
            : null
          : typeof raw === 'string'
            ? parseInteger(raw)
            : null;
      if (n === null || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return n;
    });
}

const contentsFormatSchema = z
  .unknown()
  .optional()
  .transform((raw, ctx) => {
    const v = raw === undefined ? '' : typeof raw === 'string' ? strip(raw).toLowerCase() : '?';
    if (v === '' || v === 'markdown') return 'markdown' as const;
    if (v === 'text') return 'text' as const;
    ctx.addIssue({ code: 'custom', message: CONTENTS_MESSAGES.format });
    return z.NEVER;
  })
  .meta({
    description: '`markdown` (the default: GitHub-flavoured, absolute links) or `text` (no markup).',
    type: 'string',
    enum: ['markdown', 'text'],
  });

const contentsMaxCharsSchema = boundedInteger(
  CONTENTS_MAX_CHARS_MIN,
  CONTENTS_MAX_CHARS_MAX,
  CONTENTS_MAX_CHARS_DEFAULT,
  CONTENTS_MESSAGES.maxChars,
).meta({
  description: `The most characters of content answered (${CONTENTS_MAX_CHARS_MIN} to ${CONTENTS_MAX_CHARS_MAX}, default ${CONTENTS_MAX_CHARS_DEFAULT}); \`length\` is always the whole content's.`,
  type: 'integer',
  minimum: CONTENTS_MAX_CHARS_MIN,
  maximum: CONTENTS_MAX_CHARS_MAX,
});

const contentsFreshSchema = z
  .unknown()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined || typeof raw === 'boolean') return raw === true;
    const v = typeof raw === 'string' ? strip(raw).toLowerCase() : '?';
    if (BOOLEAN_TRUE.has(v)) return true;
    if (BOOLEAN_FALSE.has(v)) return false;
    ctx.addIssue({ code: 'custom', message: CONTENTS_MESSAGES.fresh });
    return z.NEVER;
  })
  .meta({ description: '`true` reads the page again instead of answering it from the cache.', type: 'boolean' });

/** Query string of GET /api/v1/contents/. */
export const contentsQuerySchema = z.object({
  url: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const url = raw === undefined ? '' : raw.trim();
      if (url === '') {
        ctx.addIssue({ code: 'custom', message: CONTENTS_MESSAGES.url });
        return z.NEVER;
      }
      return url;
    })
    .meta({
      description: 'The page to read: an absolute http or https URL (at most 2,048 characters).',
      type: 'string',
    }),
  format: contentsFormatSchema,
  max_chars: contentsMaxCharsSchema,
  fresh: contentsFreshSchema,
});

export type ContentsParams = z.output<typeof contentsQuerySchema>;

/** JSON body of POST /api/v1/contents/. */
export const contentsBodySchema = z.object({
  urls: z
    .unknown()
    .transform((raw, ctx) => {
      const ok =
        Array.isArray(raw) &&
        raw.length >= 1 &&
        raw.length <= CONTENTS_URLS_MAX &&
        raw.every((u) => typeof u === 'string');
      if (!ok) {
        ctx.addIssue({ code: 'custom', message: CONTENTS_MESSAGES.urls });
        return z.NEVER;
      }
      return (raw as string[]).map((u) => u.trim());
    })
    .meta({
      description: `The pages to read, 1 to ${CONTENTS_URLS_MAX} absolute http or https URLs.`,
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      maxItems: CONTENTS_URLS_MAX,
    }),
  format: contentsFormatSchema,
  max_chars: contentsMaxCharsSchema,
  fresh: contentsFreshSchema,
});

export type ContentsBody = z.output<typeof contentsBodySchema>;

/** The shape of a POST body before the schema: a JSON object. */
export function contentsBodyErrors(raw: unknown): FieldErrors | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { detail: CONTENTS_MESSAGES.body };
  return null;
}

/** Web search's `contents`: the first n results (0 to 5, default 0) each with its page's contents. */
export const webContentsSchema = boundedInteger(0, WEB_CONTENTS_MAX, 0, CONTENTS_MESSAGES.webContents).meta({
  description: `Read the pages of the first n results (0 to ${WEB_CONTENTS_MAX}, default 0): each gets \`contents\` (the page, as GET /api/v1/contents/ answers it, without \`url\`) or \`contents_error\`. Counts one more search per page read.`,
  type: 'integer',
  minimum: 0,
  maximum: WEB_CONTENTS_MAX,
});

/** Query string of GET /api/v1/web/: the paged search fields and `contents`. */
export const webSearchQuerySchema = webQuerySchema.extend({ contents: webContentsSchema });

export type WebSearchParams = z.output<typeof webSearchQuerySchema>;
