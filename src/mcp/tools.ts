import { z } from 'zod';
import {
  cardsQuerySchema,
  ENGINE_SLUGS,
  imagesQuerySchema,
  instantQuerySchema,
  mapsQuerySchema,
  noQuerySchema,
  PAGE_MAX,
  suggestQuerySchema,
  translateSchema,
  webQuerySchema,
  webSearchQuerySchema,
  contentsQuerySchema,
} from '../search/queries.js';
import { engineNamed } from '../search/engines.js';
import {
  cardsResponseSchema,
  imagesResponseSchema,
  instantResponseSchema,
  mapsResponseSchema,
  newsResponseSchema,
  statusResponseSchema,
  suggestResponseSchema,
  translateResponseSchema,
  videosResponseSchema,
  webResponseSchema,
  contentsPageSchema,
} from '../search/response-schemas.js';
import {
  renderCards,
  renderImages,
  renderInstant,
  renderMaps,
  renderNews,
  renderPage,
  renderStatus,
  renderSuggest,
  renderTranslate,
  renderVideos,
  renderWeb,
} from './render.js';

/*
 * The MCP tools: each one IS a REST endpoint of /api/v1/. A call is run as a
 * GET of that endpoint (plugin.ts), so the endpoint's own zod schema
 * validates it (the same 400 messages), its handler answers (the same
 * outcome) and its usage units are counted. The tool's input schema is the
 * input side of that same zod schema (the query-string fields, as strings),
 * and its output schema the endpoint's 200 body (search/response-schemas.ts,
 * which also feeds the OpenAPI document).
 */

type Json = Record<string, unknown>;

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  /** The endpoint the tool runs (full path, with its trailing slash). */
  path: `/api/v1/${string}/`;
  /** The zod schema that endpoint validates its query string with. */
  fields: z.ZodObject;
  /** Only these fields of `fields` (the two modes of the maps endpoint); default all. */
  only?: readonly string[];
  /** Required fields, when the schema's own answer is not the tool's (maps' modes). */
  required?: readonly string[];
  /** The endpoint's 200 body. */
  response: z.ZodType;
  /** The short text the model reads with the structured output. */
  render(body: Json): string;
  /** A page-contents tool: not listed when CONTENTS_ENABLED is false. */
  contents?: true;
  /** The tool as it is listed when page contents are off (web search without `contents`). */
  withoutContents?: ToolDefinition;
}

const PAGED = 'Results come from several providers at once; `unresponsive` lists the providers that failed.';

const WEB_SEARCH: ToolDefinition = {
  name: 'web_search',
  title: 'Web search',
  description: `Searches the web with up to four engines at once and merges the results. ${PAGED} Counts one search per engine asked.`,
  path: '/api/v1/web/',
  fields: webQuerySchema,
  response: webResponseSchema,
  render: renderWeb,
};

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    ...WEB_SEARCH,
    description: `Searches the web with up to four engines at once and merges the results. ${PAGED} With \`contents\` (1 to 5), the pages of the first results are read too and their main text comes with them (saves a read_page call per result). Counts one search per engine asked and one per page read.`,
    fields: webSearchQuerySchema,
    withoutContents: WEB_SEARCH,
  },
  {
    name: 'read_page',
    title: 'Read a web page',
    description:
      'Reads one web page (HTML, plain text or PDF) and answers its main text as markdown (or plain text): no menus, banners, comments or footers. Use it to read a search result before citing it. `max_chars` bounds the text (default 20000); `truncated` says when it was cut. Pages are cached for an hour. Counts one search.',
    path: '/api/v1/contents/',
    fields: contentsQuerySchema,
    only: ['url', 'format', 'max_chars'],
    required: ['url'],
    response: contentsPageSchema,
    render: renderPage,
    contents: true,
  },
  {
    name: 'image_search',
    title: 'Image search',
    description: `Searches images. ${PAGED} Counts one search.`,
    path: '/api/v1/images/',
    fields: imagesQuerySchema,
    response: imagesResponseSchema,
    render: renderImages,
  },
  {
    name: 'news_search',
    title: 'News search',
    description: `Searches recent news articles. ${PAGED} Counts one search.`,
    path: '/api/v1/news/',
    fields: webQuerySchema,
    response: newsResponseSchema,
    render: renderNews,
  },
  {
    name: 'video_search',
    title: 'Video search',
    description: `Searches videos. ${PAGED} Counts one search.`,
    path: '/api/v1/videos/',
    fields: webQuerySchema,
    response: videosResponseSchema,
    render: renderVideos,
  },
  {
    name: 'suggest',
    title: 'Search suggestions',
    description: 'Autocomplete suggestions for a partial query. Counts one search.',
    path: '/api/v1/suggest/',
    fields: suggestQuerySchema,
    response: suggestResponseSchema,
    render: renderSuggest,
  },
  {
    name: 'geocode',
    title: 'Geocode a place',
    description:
      'Finds places by name or address (OpenStreetMap): coordinates, full name, map links. Counts one search.',
    path: '/api/v1/maps/',
    fields: mapsQuerySchema,
    only: ['q', 'limit', 'lang'],
    required: ['q'],
    response: mapsResponseSchema,
    render: renderMaps,
  },
  {
    name: 'reverse_geocode',
    title: 'Reverse geocode coordinates',
    description: 'Names the place at a latitude and longitude (OpenStreetMap). Counts one search.',
    path: '/api/v1/maps/',
    fields: mapsQuerySchema,
    only: ['lat', 'lon', 'label', 'lang'],
    required: ['lat', 'lon'],
    response: mapsResponseSchema,
    render: renderMaps,
  },
  {
    name: 'translate',
    title: 'Translate text',
    description: 'Translates text into a target language (the source is detected unless given). Counts one search.',
    path: '/api/v1/translate/',
    fields: translateSchema,
    response: translateResponseSchema,
    render: renderTranslate,
  },
  {
    name: 'instant_answer',
    title: 'Instant answer',
    description:
      'An instant answer to a query when there is one: arithmetic, unit and currency conversions, weather, time zones, dates, hashes, IP and more. Counts one search.',
    path: '/api/v1/instant/',
    fields: instantQuerySchema,
    response: instantResponseSchema,
    render: renderInstant,
  },
  {
    name: 'knowledge_cards',
    title: 'Knowledge cards',
    description:
      'Knowledge panels for a query: a Wikipedia summary, a film or series, a place to visit, a Stack Exchange question and its top answer, a map. Counts one search.',
    path: '/api/v1/cards/',
    fields: cardsQuerySchema,
    response: cardsResponseSchema,
    render: renderCards,
  },
  {
    name: 'provider_status',
    title: 'Provider status',
    description:
      'The state (up, down, not yet observed) of every upstream provider configured here. Not counted as a search.',
    path: '/api/v1/status/',
    fields: noQuerySchema,
    response: statusResponseSchema,
    render: renderStatus,
  },
];

/** A tool as `tools/list` lists it, with what a call needs. */
export interface Tool {
  definition: ToolDefinition;
  /** The query-string fields a call forwards. */
  properties: readonly string[];
  listing: {
    name: string;
    title: string;
    description: string;
    inputSchema: { type: 'object'; properties: Json; required?: string[] };
    outputSchema: { type: 'object'; [key: string]: unknown };
    annotations: { title: string; readOnlyHint: true; openWorldHint: boolean; idempotentHint: boolean };
  };
}

/** A JSON Schema without `$schema` (clients compile it with their own dialect). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as Json;
  return rest;
}

/** The fields the schema refuses to do without: absent while every other field is given, it reports them. */
export function requiredFields(schema: z.ZodObject): string[] {
  const fields = Object.keys(schema.shape);
  return fields.filter((field) => {
    const others = Object.fromEntries(fields.filter((f) => f !== field).map((f) => [f, '1']));
    const result = schema.safeParse(others);
    return !result.success && result.error.issues.some((issue) => issue.path[0] === field);
  });
}

export function buildTool(definition: ToolDefinition): Tool {
  const input = jsonSchema(definition.fields, 'input');
  const all = (input.properties ?? {}) as Json;
  const names = (definition.only ?? Object.keys(all)).filter((n) => n in all);
  const properties = Object.fromEntries(names.map((n) => [n, all[n]]));
  // `q` may come as `query` (aliasesOf): the endpoint says when neither is given.
  const required = (definition.required ? [...definition.required] : requiredFields(definition.fields)).filter(
    (field) => !(field === 'q' && names.includes('q')),
  );
  const output = jsonSchema(definition.response, 'output');
  Object.assign(properties, aliasesOf({ definition, properties: names }));
  return {
    definition,
    properties: names,
    listing: {
      name: definition.name,
      title: definition.title,
      description: definition.description,
      inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) },
      outputSchema: { ...output, type: 'object' },
      annotations: {
        title: definition.title,
        readOnlyHint: true,
        // Status is read from this instance's database; the others ask providers on the open web.
        openWorldHint: definition.name !== 'provider_status',
        idempotentHint: true,
      },
    },
  };
}

/**
 * The query string of a call: the tool's own fields only (maps' modes stay
 * apart), numbers and booleans as their text, a list joined with commas
 * (`engine`), absent or null fields left out. Everything else is for the
 * endpoint's schema to judge.
 */
export function queryOf(tool: Tool, args: Json): string {
  const query = new URLSearchParams();
  for (const name of tool.properties) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) query.set(name, value.map(String).join(','));
    else if (typeof value === 'object') query.set(name, JSON.stringify(value));
    else query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `?${text}` : '';
}

/*
 * The names agents already call these fields by (Brave's and SearXNG's MCP servers): `query`,
 * `count`, `offset`, `engines` with engine names, `freshness` and `time_range`, `safesearch`,
 * `language`, `pageno`. Each is turned into the endpoint's own field before the call; a value the
 * endpoint would silently ignore (a `date` of "century") is refused here, naming the field.
 */

/** Another name of a field, with how its value becomes the field's, or an error message. */
type Converted = { value: string } | { error: string };

interface Alias {
  name: string;
  field: string;
  description: string;
  convert(value: unknown): Converted;
}

const text = (value: unknown): string =>
  Array.isArray(value) ? value.map(String).join(',') : typeof value === 'string' ? value.trim() : String(value);

const integerIn = (min: number, max: number) => (value: unknown) => {
  const s = text(value);
  const n = /^\d+$/.test(s) ? Number(s) : Number.NaN;
  return Number.isInteger(n) && n >= min && n <= max;
};

const DATES: Readonly<Record<string, string>> = {
  '': '',
  all: '',
  any: '',
  none: '',
  d: 'd',
  w: 'w',
  m: 'm',
  y: 'y',
  day: 'd',
  week: 'w',
  month: 'm',
  year: 'y',
  pd: 'd',
  pw: 'w',
  pm: 'm',
  py: 'y',
};
const DATE_MESSAGE = 'Must be one of day, week, month, year (also d, w, m, y or pd, pw, pm, py).';
const dateOf = (value: unknown): Converted => {
  const d = DATES[text(value).toLowerCase()];
  return d === undefined ? { error: DATE_MESSAGE } : { value: d };
};

const SAFE: Readonly<Record<string, string>> = {
  '0': 'off',
  off: 'off',
  false: 'off',
  no: 'off',
  '1': 'on',
  '2': 'on',
  moderate: 'on',
  strict: 'on',
  on: 'on',
  true: 'on',
  yes: 'on',
};

/** Engine names (brave, mojeek…) as the endpoints' slugs; other values are left for the endpoint to judge. */
function engineSlugs(value: unknown): string {
  return text(value)
    .split(/[,\s]+/)
    .filter(Boolean)
    .map((name) => {
      const named = engineNamed(name);
      return named && ENGINE_SLUGS.includes(named.engine.slug) ? named.engine.slug : name;
    })
    .join(',');
}

const COUNT_MAX = 50;
const PAGE_INDEX_MAX = PAGE_MAX - 1;

const ALIASES: readonly Alias[] = [
  { name: 'query', field: 'q', description: 'The same as `q`.', convert: (v) => ({ value: text(v) }) },
  {
    name: 'engines',
    field: 'engine',
    description: 'The same as `engine`; engine names (brave, mojeek, marginalia, staan) are accepted too.',
    convert: (v) => ({ value: engineSlugs(v) }),
  },
  {
    name: 'offset',
    field: 'page',
    description: `Page index from 0 (Brave's \`offset\`): 0 is page 1, at most ${PAGE_INDEX_MAX}.`,
    convert: (v) =>
      integerIn(0, PAGE_INDEX_MAX)(v)
        ? { value: String(Number(text(v)) + 1) }
        : { error: `Must be an integer between 0 and ${PAGE_INDEX_MAX}.` },
  },
  { name: 'pageno', field: 'page', description: 'The same as `page`.', convert: (v) => ({ value: text(v) }) },
  {
    name: 'freshness',
    field: 'date',
    description: "Brave's freshness: pd, pw, pm, py (past day, week, month, year).",
    convert: dateOf,
  },
  {
    name: 'time_range',
    field: 'date',
    description: "SearXNG's time range: day, week, month, year.",
    convert: dateOf,
  },
  {
    name: 'safesearch',
    field: 'safe',
    description: 'off, moderate or strict (or 0, 1, 2): anything but off filters.',
    convert: (v) => {
      const safe = SAFE[text(v).toLowerCase()];
      return safe === undefined ? { error: 'Must be off, moderate or strict (or 0, 1, 2).' } : { value: safe };
    },
  },
  { name: 'language', field: 'lang', description: 'The same as `lang`.', convert: (v) => ({ value: text(v) }) },
  { name: 'search_lang', field: 'lang', description: 'The same as `lang`.', convert: (v) => ({ value: text(v) }) },
  {
    name: 'count',
    field: 'limit',
    description: `Places to return, 1 to ${COUNT_MAX}: the same as \`limit\`.`,
    convert: (v) =>
      integerIn(1, COUNT_MAX)(v) ? { value: text(v) } : { error: `Must be an integer between 1 and ${COUNT_MAX}.` },
  },
];

/** The tools whose answer is a `results` list: `count` keeps its first results. */
const COUNTED = new Set(['web_search', 'image_search', 'news_search', 'video_search']);

/** The aliases a tool accepts, as they are listed in its input schema. */
export function aliasesOf(tool: Pick<Tool, 'definition' | 'properties'>): Record<string, Json> {
  const listed: Record<string, Json> = {};
  for (const alias of ALIASES) {
    if (tool.properties.includes(alias.field)) listed[alias.name] = { type: 'string', description: alias.description };
  }
  if (COUNTED.has(tool.definition.name)) {
    listed.count = {
      type: 'integer',
      minimum: 1,
      maximum: COUNT_MAX,
      description: 'Results to return (the first ones).',
    };
  }
  return listed;
}

export type PreparedCall =
  | { ok: true; args: Json; count: number | null }
  | { ok: false; errors: Record<string, string> };

/**
 * A call's arguments in the endpoint's own names. A field given under its own name and under an
 * alias (`q` and `query`) is an error naming both: which one was meant cannot be told; an alias
 * with a value it cannot take is an error naming the alias, as is a `date` the endpoint would ignore.
 */
export function prepareCall(tool: Tool, args: Json): PreparedCall {
  const out: Json = { ...args };
  const errors: Record<string, string> = {};
  for (const alias of ALIASES) {
    const value = args[alias.name];
    if (value === undefined || value === null || !tool.properties.includes(alias.field)) continue;
    if (alias.name === 'count' && COUNTED.has(tool.definition.name)) continue;
    delete out[alias.name];
    const own = args[alias.field];
    if (own !== undefined && own !== null) {
      errors[alias.name] = `Give \`${alias.field}\` or \`${alias.name}\`, not both.`;
      continue;
    }
    const converted = alias.convert(value);
    if ('error' in converted) errors[alias.name] = converted.error;
    else if (out[alias.field] === undefined || out[alias.field] === null) out[alias.field] = converted.value;
  }
  if (tool.properties.includes('date') && out.date !== undefined && out.date !== null) {
    const date = dateOf(out.date);
    if ('error' in date) errors.date = date.error;
    else out.date = date.value;
  }
  if (tool.properties.includes('engine') && out.engine !== undefined && out.engine !== null) {
    out.engine = engineSlugs(out.engine);
  }
  let count: number | null = null;
  if (COUNTED.has(tool.definition.name) && args.count !== undefined && args.count !== null) {
    if (integerIn(1, COUNT_MAX)(args.count)) count = Number(text(args.count));
    else errors.count = `Must be an integer between 1 and ${COUNT_MAX}.`;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, args: out, count };
}

/** A 200 body with its first `count` results only. */
export function firstResults(body: Json, count: number | null): Json {
  if (count === null || !Array.isArray(body.results)) return body;
  return { ...body, results: body.results.slice(0, count) };
}
