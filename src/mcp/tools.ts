import { z } from 'zod';
import { instantQuerySchema } from '../routes/api/instant.js';
import { statusResponseSchema } from '../routes/api/status.js';
import { cardsQuerySchema } from '../search/cards/index.js';
import { mapsQuerySchema } from '../search/maps.js';
import { imagesQuerySchema } from '../search/media.js';
import { suggestQuerySchema, webQuerySchema } from '../search/params.js';
import {
  cardsResponseSchema,
  imagesResponseSchema,
  instantResponseSchema,
  mapsResponseSchema,
  newsResponseSchema,
  suggestResponseSchema,
  translateResponseSchema,
  videosResponseSchema,
  webResponseSchema,
} from '../search/response-schemas.js';
import { translateSchema } from '../search/translate.js';
import {
  renderCards,
  renderImages,
  renderInstant,
  renderMaps,
  renderNews,
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
}

const PAGED = 'Results come from several providers at once; `unresponsive` lists the providers that failed.';

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'web_search',
    title: 'Web search',
    description: `Searches the web with up to four engines at once and merges the results. ${PAGED} Counts one search per engine asked.`,
    path: '/api/v1/web/',
    fields: webQuerySchema,
    response: webResponseSchema,
    render: renderWeb,
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
    fields: z.object({}),
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
  const required = definition.required ? [...definition.required] : requiredFields(definition.fields);
  const output = jsonSchema(definition.response, 'output');
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
