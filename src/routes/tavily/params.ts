import { z } from 'zod';
import type { ContentsFormat } from '../../contents/page.js';
import type { DateFilter } from '../../contracts/search.js';
import { Q_MAX_LENGTH } from '../../search/queries.js';
import { type FieldErrors, parseFields } from '../../search/query-string.js';

/*
 * The JSON bodies of Tavily's POST /search and POST /extract, as its API reference defines them
 * and its SDKs send them (tavily-python drops the parameters left at None; @tavily/core leaves
 * undefined ones out of the JSON). Unknown fields are ignored and a null is an absent field, as
 * Tavily's own API does; a value of the wrong type or out of range is the caller's 400.
 * Accepted but without effect here (documented in docs/api.md): search_depth, auto_parameters,
 * include_answer (the answer is null), chunks_per_source of a search, country, exact_match,
 * extract_depth.
 */

export const MAX_RESULTS_MAX = 20;
export const EXTRACT_URLS_MAX = 20;
export const CHUNKS_PER_SOURCE_MAX = 5;
export const CHUNKS_PER_SOURCE_DEFAULT = 3;

const TIME_RANGES: Readonly<Record<string, DateFilter>> = {
  day: 'd',
  week: 'w',
  month: 'm',
  year: 'y',
  d: 'd',
  w: 'w',
  m: 'm',
  y: 'y',
};

const boolean = z.boolean({ error: 'Must be true or false.' }).optional();
const integer = (min: number, max: number) =>
  z
    .number({ error: 'Must be an integer.' })
    .int({ error: 'Must be an integer.' })
    .min(min, { error: `Must be from ${min} to ${max}.` })
    .max(max, { error: `Must be from ${min} to ${max}.` });
const domains = z.array(z.string({ error: 'Must be a list of domain names.' }), {
  error: 'Must be a list of domain names.',
});
/** YYYY-MM-DD, a real day. */
const day = z
  .string({ error: 'Must be a date as YYYY-MM-DD.' })
  .refine((s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)), {
    error: 'Must be a date as YYYY-MM-DD.',
  });
const query = z
  .string({ error: 'Must be a string.' })
  .transform((s) => s.trim())
  .refine((s) => s !== '', { error: 'The query is empty.' })
  .refine((s) => [...s].length <= Q_MAX_LENGTH, { error: `Must be at most ${Q_MAX_LENGTH} characters.` });

export const tavilySearchSchema = z.object({
  query: query.optional(),
  max_results: integer(0, MAX_RESULTS_MAX).optional(),
  topic: z.enum(['general', 'news', 'finance'], { error: 'Must be general, news or finance.' }).optional(),
  time_range: z
    .string({ error: 'Must be day, week, month or year (or d, w, m, y).' })
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => s in TIME_RANGES || s === 'none' || s === '', {
      error: 'Must be day, week, month or year (or d, w, m, y).',
    })
    .optional(),
  start_date: day.optional(),
  end_date: day.optional(),
  days: integer(1, 36_500).optional(),
  include_domains: domains.optional(),
  exclude_domains: domains.optional(),
  country: z.string({ error: 'Must be a country name.' }).optional(),
  include_raw_content: z
    .union([z.boolean(), z.enum(['markdown', 'text'])], { error: 'Must be true, false, "markdown" or "text".' })
    .optional(),
  include_images: boolean,
  include_image_descriptions: boolean,
  include_favicon: boolean,
  search_depth: z
    .enum(['basic', 'advanced', 'fast', 'ultra-fast'], { error: 'Must be basic, advanced, fast or ultra-fast.' })
    .optional(),
  include_answer: z
    .union([z.boolean(), z.enum(['basic', 'advanced'])], { error: 'Must be true, false, "basic" or "advanced".' })
    .optional(),
  chunks_per_source: integer(1, CHUNKS_PER_SOURCE_MAX).optional(),
  auto_parameters: boolean,
  include_usage: boolean,
  exact_match: boolean,
});

export interface TavilySearch {
  query: string;
  maxResults: number;
  /** topic=news: the news search; general and finance: the web search. */
  news: boolean;
  date: DateFilter;
  /** Results dated outside [since, until] (YYYY-MM-DD, inclusive) are left out. */
  since: string | null;
  until: string | null;
  includeDomains: string[];
  excludeDomains: string[];
  /** The pages of the results read, in this format; null: not asked. */
  rawContent: ContentsFormat | null;
  images: boolean;
  imageDescriptions: boolean;
  favicon: boolean;
  usage: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** One line naming every invalid field, as Tavily's `detail.error` is one string. */
export function describe(errors: FieldErrors): string {
  return Object.entries(errors)
    .map(([field, message]) => `${field}: ${message}`)
    .join(' ');
}

function bodyObject(body: unknown): body is Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body);
}

const NOT_AN_OBJECT = 'The request body must be a JSON object.';

/** The smallest of Sift's date filters covering the last `days` days ('' beyond a year). */
export function dateFilterOfDays(days: number): DateFilter {
  if (days <= 1) return 'd';
  if (days <= 7) return 'w';
  if (days <= 31) return 'm';
  if (days <= 366) return 'y';
  return '';
}

const DAY_MS = 86_400_000;

/** A domain as given ("https://www.Example.com/x" or "example.com"), as a lowercase host name. */
function domainOf(raw: string): string {
  const s = raw.trim().toLowerCase();
  const host = URL.canParse(s) ? new URL(s).hostname : s.replace(/^[a-z]+:\/\//, '').split(/[/?#:]/)[0]!;
  return host.replace(/^www\./, '').replace(/\.$/, '');
}

export function parseTavilySearch(body: unknown, now: number): Parsed<TavilySearch> {
  if (!bodyObject(body)) return { ok: false, error: NOT_AN_OBJECT };
  if (!Object.hasOwn(body, 'query') || body.query === null)
    return { ok: false, error: 'query: The query is required.' };
  const parsed = parseFields(tavilySearchSchema, body);
  if (!parsed.ok) return { ok: false, error: describe(parsed.errors) };
  const v = parsed.value;
  const news = v.topic === 'news';
  let date: DateFilter = v.time_range ? (TIME_RANGES[v.time_range] ?? '') : '';
  // `days` is Tavily's window of a news search.
  if (date === '' && news && v.days !== undefined) date = dateFilterOfDays(v.days);
  // A start date: the engines' smallest window that reaches back to it, then the dates checked.
  if (date === '' && v.start_date !== undefined) {
    date = dateFilterOfDays(Math.ceil((now - Date.parse(`${v.start_date}T00:00:00Z`)) / DAY_MS));
  }
  const raw = v.include_raw_content;
  return {
    ok: true,
    value: {
      query: v.query!,
      maxResults: v.max_results ?? 5,
      news,
      date,
      since: v.start_date ?? null,
      until: v.end_date ?? null,
      includeDomains: (v.include_domains ?? []).map(domainOf).filter((d) => d !== ''),
      excludeDomains: (v.exclude_domains ?? []).map(domainOf).filter((d) => d !== ''),
      rawContent: raw === true ? 'markdown' : raw === false || raw === undefined ? null : raw,
      images: v.include_images === true,
      imageDescriptions: v.include_image_descriptions === true,
      favicon: v.include_favicon === true,
      usage: v.include_usage === true,
    },
  };
}

/** Whether `url`'s host is `domain` or one of its subdomains. */
export function inDomain(url: string, domain: string): boolean {
  if (!URL.canParse(url)) return false;
  const host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  return host === domain || host.endsWith(`.${domain}`);
}

export const tavilyExtractSchema = z.object({
  urls: z.union(
    [
      z.string(),
      z
        .array(z.string({ error: 'Must be a URL or a list of URLs.' }))
        .min(1, { error: `Must name 1 to ${EXTRACT_URLS_MAX} URLs.` })
        .max(EXTRACT_URLS_MAX, { error: `Must name 1 to ${EXTRACT_URLS_MAX} URLs.` }),
    ],
    { error: 'Must be a URL or a list of URLs.' },
  ),
  format: z.enum(['markdown', 'text'], { error: 'Must be markdown or text.' }).optional(),
  extract_depth: z.enum(['basic', 'advanced'], { error: 'Must be basic or advanced.' }).optional(),
  include_images: boolean,
  include_favicon: boolean,
  include_usage: boolean,
  timeout: z
    .number({ error: 'Must be a number of seconds from 1 to 60.' })
    .min(1, { error: 'Must be a number of seconds from 1 to 60.' })
    .max(60, { error: 'Must be a number of seconds from 1 to 60.' })
    .optional(),
  query: z.string({ error: 'Must be a string.' }).optional(),
  chunks_per_source: integer(1, CHUNKS_PER_SOURCE_MAX).optional(),
});

export interface TavilyExtract {
  urls: string[];
  format: ContentsFormat;
  images: boolean;
  favicon: boolean;
  usage: boolean;
  /** The caller's bound on the whole extraction, ms; null: the contents timeout only. */
  timeoutMs: number | null;
  /** Keep only the chunks of each page most relevant to this query; null: the whole page. */
  query: string | null;
  chunksPerSource: number;
}

export function parseTavilyExtract(body: unknown): Parsed<TavilyExtract> {
  if (!bodyObject(body)) return { ok: false, error: NOT_AN_OBJECT };
  if (!Object.hasOwn(body, 'urls') || body.urls === null) return { ok: false, error: 'urls: The urls are required.' };
  const parsed = parseFields(tavilyExtractSchema, body);
  if (!parsed.ok) return { ok: false, error: describe(parsed.errors) };
  const v = parsed.value;
  const q = v.query?.trim() ?? '';
  return {
    ok: true,
    value: {
      urls: typeof v.urls === 'string' ? [v.urls] : v.urls,
      format: v.format ?? 'markdown',
      images: v.include_images === true,
      favicon: v.include_favicon === true,
      usage: v.include_usage === true,
      timeoutMs: v.timeout === undefined ? null : Math.round(v.timeout * 1000),
      query: q === '' ? null : q,
      chunksPerSource: v.chunks_per_source ?? CHUNKS_PER_SOURCE_DEFAULT,
    },
  };
}
