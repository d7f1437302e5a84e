import type { DateFilter } from '../../contracts/search.js';
import { ENGINE_SLUGS, type EngineSlug, PAGE_MAX, qSchema } from '../../search/queries.js';
import { flattenQuery, parseInteger } from '../../search/query-string.js';
import { type Category, CATEGORIES, engineByBang, engineNamed, isCategory } from '../../search/engines.js';

/*
 * SearXNG's search parameters (its docs: "Search API"), read from the query string and from a
 * form or JSON body, the body winning as SearXNG's form does:
 * q, format (json), categories, engines, language, pageno, time_range, safesearch.
 * What SearXNG refuses with a 400 is refused here too (no query, a pageno, time_range or
 * safesearch it does not know); unknown categories and engines are ignored as SearXNG ignores them.
 */

export const FIELDS = [
  'q',
  'format',
  'categories',
  'engines',
  'language',
  'pageno',
  'time_range',
  'safesearch',
] as const;

export type RawFields = Partial<Record<(typeof FIELDS)[number], string>>;

/** Which engines a category is searched with: every engine offering it, or the named web engines. */
export type Scope = 'all' | EngineSlug[];

export interface SearxQuery {
  q: string;
  /** The searches to run, each with its web-engine scope (Brave takes part in images, news and videos too). */
  categories: Map<Category, Scope>;
  lang: string;
  page: number;
  date: DateFilter;
  safe: boolean;
  /** Knowledge cards (infoboxes) are looked for: page 1, no time range, every web engine or a card engine named. */
  cards: boolean;
}

export type FieldErrors = Record<string, string>;

const TIME_RANGES: Readonly<Record<string, DateFilter>> = { day: 'd', week: 'w', month: 'm', year: 'y' };
const LANGUAGE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/;
const AUTOMATIC: ReadonlySet<string> = new Set(['all', 'auto']);
const WEB_ENGINES: ReadonlySet<string> = new Set(ENGINE_SLUGS);

/**
 * The category of an engine Sift does not have, by SearXNG's names ("bing images", "google news",
 * "youtube"): Perplexica asks for images by naming image engines, without a category.
 */
export function categoryOfOtherEngine(name: string): Category {
  if (/\bimages?$|^(?:flickr|unsplash|openverse|pinterest|deviantart|imgur|wallhaven)\b/.test(name)) return 'images';
  if (/\bvideos?$|^(?:youtube|vimeo|dailymotion|odysee|rumble)\b/.test(name)) return 'videos';
  if (/\bnews$/.test(name)) return 'news';
  if (/\bmaps?$|^(?:photon|openstreetmap)\b/.test(name)) return 'map';
  return 'general';
}

/** The fields of the query string and the body (form or JSON object), the body's winning. */
export function rawFields(query: unknown, body: unknown): RawFields {
  const fields: RawFields = flattenQuery(query, FIELDS);
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    for (const field of FIELDS) {
      if (!Object.hasOwn(b, field)) continue;
      let v = b[field];
      if (Array.isArray(v)) v = field === 'categories' || field === 'engines' ? v.join(',') : v[v.length - 1];
      if (typeof v === 'string') fields[field] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') fields[field] = String(v);
    }
  }
  return fields;
}

/** The answer formats SearXNG writes (`format`). */
export type OutputFormat = 'json' | 'csv' | 'rss';

const FORMATS: ReadonlySet<string> = new Set<OutputFormat>(['json', 'csv', 'rss']);

/** The answer format asked for (json when none). */
export function outputFormat(fields: RawFields): OutputFormat {
  const format = (fields.format ?? '').trim().toLowerCase();
  return FORMATS.has(format) ? (format as OutputFormat) : 'json';
}

/** The format asked for, when it is not one Sift writes (html, SearXNG's page): a message for a 400. */
export function unsupportedFormat(fields: RawFields): string | null {
  const format = (fields.format ?? 'json').trim().toLowerCase();
  if (format === '' || FORMATS.has(format)) return null;
  return `Unsupported format "${(fields.format ?? '').slice(0, 40)}": this API answers format=json, csv or rss.`;
}

/**
 * SearXNG's bangs in a query: `!images`, `!news` (a category), `!brave`, `!br`, `!mojeek` (an
 * engine, by name or shortcut, `_` for a space). Known ones are taken out of the query the
 * upstreams receive and select what is searched, as SearXNG's own shortcuts do; `!!` (its external
 * bangs) and unknown ones stay in the query.
 */
export function takeBangs(q: string): { q: string; categories: string[]; engines: string[] } {
  const categories: string[] = [];
  const engines: string[] = [];
  const kept: string[] = [];
  for (const token of q.split(/\s+/)) {
    const name =
      token.startsWith('!') && !token.startsWith('!!') ? token.slice(1).toLowerCase().replaceAll('_', ' ') : '';
    if (name !== '' && isCategory(name)) categories.push(name);
    else if (name !== '' && engineByBang(name)) engines.push(engineByBang(name)!);
    else if (token !== '') kept.push(token);
  }
  return { q: kept.join(' '), categories, engines };
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');

function addEngine(categories: Map<Category, Scope>, category: Category, slug: EngineSlug | null): void {
  const scope = categories.get(category);
  if (scope === 'all') return;
  const engines = scope ?? [];
  if (slug !== null && !engines.includes(slug)) engines.push(slug);
  categories.set(category, engines);
}

export function parseSearxQuery(
  fields: RawFields,
): { ok: true; value: SearxQuery } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const bangs = takeBangs(fields.q ?? '');
  const banged = bangs.categories.length + bangs.engines.length > 0;
  // A query of bangs only is a query without words (SearXNG answers it as one).
  const q = qSchema.safeParse(banged ? bangs.q : fields.q);
  if (!q.success) errors.q = q.error.issues[0]?.message ?? 'Invalid.';

  let page = 1;
  if (fields.pageno !== undefined && fields.pageno.trim() !== '') {
    const n = parseInteger(fields.pageno);
    if (n === null || n < 1) errors.pageno = 'Must be a positive integer.';
    else page = Math.min(PAGE_MAX, n);
  }

  let date: DateFilter = '';
  const timeRange = (fields.time_range ?? '').trim().toLowerCase();
  if (timeRange !== '' && timeRange !== 'none') {
    const d = TIME_RANGES[timeRange];
    if (d === undefined) errors.time_range = 'Must be one of day, week, month, year.';
    else date = d;
  }

  let safe = true;
  const safesearch = (fields.safesearch ?? '').trim();
  if (safesearch !== '') {
    if (safesearch === '0') safe = false;
    else if (safesearch !== '1' && safesearch !== '2') errors.safesearch = 'Must be 0, 1 or 2.';
  }

  // "all" and "auto" (what Open WebUI and LibreChat send) leave the language to the engines.
  const language = (fields.language ?? '').trim().toLowerCase();
  const lang = LANGUAGE.test(language) && !AUTOMATIC.has(language) ? language.split(/[-_]/)[0]! : '';

  if (Object.keys(errors).length > 0 || !q.success) return { ok: false, errors };

  const categories = new Map<Category, Scope>();
  // Bangs in the query choose what is searched, over the categories and engines parameters.
  const categoryNames = banged ? bangs.categories : list(fields.categories);
  const engineNames = banged ? bangs.engines : list(fields.engines);
  for (const name of categoryNames) if (isCategory(name)) categories.set(name, 'all');
  let cardEngine = false;
  const others = new Set<Category>();
  for (const name of engineNames) {
    const named = engineNamed(name);
    if (!named) {
      others.add(categoryOfOtherEngine(name));
      continue;
    }
    const { engine } = named;
    const web = WEB_ENGINES.has(engine.slug);
    if (!web && engine.categories[0] === 'general') {
      cardEngine = true;
      continue;
    }
    const category = named.category ?? engine.categories[0]!;
    addEngine(categories, category, web ? engine.slug : null);
  }
  // Engines Sift does not have stand for their category, searched with Sift's own engines, unless
  // the request already searches it (`engines=mojeek,google` asks Mojeek only).
  for (const category of others) if (!categories.has(category)) categories.set(category, 'all');
  if (categories.size === 0 && !cardEngine) categories.set('general', 'all');
  // In SearXNG's order, whatever order they were asked in.
  const ordered = new Map<Category, Scope>();
  for (const c of CATEGORIES) {
    const scope = categories.get(c);
    if (scope !== undefined) ordered.set(c, scope);
  }
  return {
    ok: true,
    value: {
      q: q.data,
      categories: ordered,
      lang,
      page,
      date,
      safe,
      // Not with a time range: the cards' own web search has none, so it would ask every engine again.
      cards: page === 1 && date === '' && (ordered.get('general') === 'all' || cardEngine),
    },
  };
}

/** The web engines a scope stands for. */
export function scopeEngines(scope: Scope | undefined): EngineSlug[] {
  return scope === undefined ? [] : scope === 'all' ? [...ENGINE_SLUGS] : scope;
}

/**
 * The searches a SearXNG search counts: what the same searches cost over REST, one per web engine
 * of the general category (`/api/v1/web/`) and one per other category (images, news, videos: the
 * media endpoints; map: `/api/v1/maps/`). Knowledge cards asked without the general category (a
 * card engine named alone) count one, as `/api/v1/cards/` does; with it they reuse its web search.
 */
export function searxUnits(query: SearxQuery): number {
  let units = 0;
  for (const [category, scope] of query.categories) units += category === 'general' ? scopeEngines(scope).length : 1;
  if (query.cards && !query.categories.has('general')) units += 1;
  return units;
}

/** The most a SearXNG search can count: every web engine and every other category. */
export const MAX_SEARX_UNITS = ENGINE_SLUGS.length + CATEGORIES.length - 1;
