import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import { z } from 'zod';
import { SEARCH_COMPONENT_SCHEMAS } from '../../search/response-schemas.js';

/*
 * The OpenAPI 3.1 document of /api/v1/ (served by schema.ts), generated from
 * the routes as they register:
 *
 * - every endpoint records its operation (describeRoute; registerSearchRoute
 *   does it for the search endpoints) with the zod schema that validates its
 *   query string or body and the zod schema of its 200 body;
 * - parameters come from the validating schemas through zod's JSON Schema
 *   output (input side: what a client sends), a parameter being required
 *   when the schema refuses a request without it while every other field is
 *   given;
 * - bodies come from the response schemas (output side), named components
 *   referenced with $ref;
 * - the errors every API request may get (401, 403, 429, 503) are added to
 *   every operation, 400 (one message per invalid field) to every operation
 *   that validates fields, and each endpoint adds its own (404, 502, 503).
 *
 * The document is built once, at the first request for it, and reused.
 */

export type HttpMethod = 'GET' | 'POST';

/** Statuses an endpoint answers itself (besides 200 and the errors of every API request), with their meaning here. */
export type OwnErrors = Partial<Record<404 | 502 | 503, string>>;

export interface RouteDoc {
  /** Unique; a POST operation of the same path gets this with `Post` appended. */
  operationId: string;
  summary: string;
  description?: string;
  /** The 200 body. */
  response: z.ZodType;
  errors?: OwnErrors;
  /** The body of its own 502 (default: every provider asked failed). */
  failure?: z.ZodType;
  /** Its 400s may also carry a `reason` code (page contents: the caller's URL). */
  reasonOn400?: string;
  /** Extra response headers of the 200 (name → description). */
  headers?: Record<string, string>;
}

export interface ApiOperation {
  /** Full path with its trailing slash (`/api/v1/images/`); the path without it answers the same. */
  path: string;
  methods: readonly HttpMethod[];
  /** The schema validating the fields (query string for GET, body for POST). */
  fields?: z.ZodObject;
  doc: RouteDoc;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's operations as they register (the OpenAPI document is generated from them); set by the /api/v1 plugin. */
    apiOperations?: ApiOperation[];
  }
}

/** Records an operation of the /api/v1 plugin (`path` relative to its prefix, with its trailing slash). */
export function describeRoute(
  app: FastifyInstance,
  operation: { path: `/${string}`; methods: readonly HttpMethod[]; fields?: z.ZodObject; doc: RouteDoc },
): void {
  app.apiOperations?.push({ ...operation, path: app.prefix + operation.path });
}

/**
 * A documented GET of the /api/v1 plugin that is not a search (key, status, this document): served
 * at `path` and without its trailing slash.
 */
export function describedGet(
  app: FastifyInstance,
  path: `/${string}/`,
  handler: RouteHandlerMethod,
  doc: RouteDoc,
): void {
  describeRoute(app, { path, methods: ['GET'], doc });
  app.get(path, handler);
  app.get(path.slice(0, -1), handler);
}

// --- the document ---------------------------------------------------------------------

type Json = Record<string, unknown>;

const SCHEMAS = '#/components/schemas/';
const RESPONSES = '#/components/responses/';
const JSON_TYPE = 'application/json';

const jsonContent = (schema: Json) => ({ [JSON_TYPE]: { schema } });
const ref = (base: string, name: string) => ({ $ref: base + name });
const header = (description: string, required = false) => ({
  description,
  required,
  schema: { type: 'string' },
});

const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': header('The burst and sustained limits of the key (IETF draft RateLimit headers).'),
  RateLimit: header('What remains of the tightest limit, once the limits were checked.'),
};

const DESCRIPTION = `The Sift search API.

Every request needs an API key: \`Authorization: Api-Key <key>\` (or \`Authorization: Bearer <key>\`, or \`X-Api-Key: <key>\`).
Checks run in this order: authentication (401, 403), rate limits and the monthly quota (429), parameters (400), the endpoint.
Every path is listed without its trailing slash and answers the same with it (\`/api/v1/web/\`, the form the API index
links to); HEAD is answered like GET, and another method on a known path is 405
(\`MethodNotAllowed\`); an unknown path is 404. Error bodies are JSON: \`{"detail": "…"}\`, except 400 (one message per
invalid field) and 502 (\`detail\` with the providers that failed).`;

/** The error responses shared by every operation (components.responses). */
function sharedResponses(): Json {
  const detail = jsonContent(ref(SCHEMAS, 'Detail'));
  return {
    Unauthorized: {
      description: 'No key, an unrecognised scheme, or a bad or revoked key.',
      headers: { 'WWW-Authenticate': header('Always `Api-Key`.', true) },
      content: detail,
    },
    Forbidden: { description: 'The key belongs to a disabled account.', content: detail },
    TooManyRequests: {
      description: 'A rate limit (burst or sustained) or the monthly search quota is exhausted.',
      headers: { 'Retry-After': header('Seconds to wait.', true), ...RATE_LIMIT_HEADERS },
      content: detail,
    },
    ServiceUnavailable: {
      description: 'The keys or limits cannot be checked right now.',
      headers: { 'Retry-After': header('Seconds to wait.') },
      content: detail,
    },
    NotFound: { description: 'No such path.', content: detail },
    MethodNotAllowed: {
      description: 'The path exists, not with this method.',
      headers: { Allow: header('The methods the path answers.', true) },
      content: detail,
    },
    PayloadTooLarge: { description: 'The request body is too large.', content: detail },
    UnsupportedMediaType: {
      description: 'The request body is neither form-encoded nor JSON.',
      content: detail,
    },
  };
}

/** A JSON Schema as an embedded Schema Object: no $schema or $id of its own. */
function embedded(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/** The fields the schema refuses to do without: absent while every other field is given, it reports them. */
function requiredFields(schema: z.ZodObject): Set<string> {
  const fields = Object.keys(schema.shape);
  const required = new Set<string>();
  for (const field of fields) {
    const others = Object.fromEntries(fields.filter((f) => f !== field).map((f) => [f, '1']));
    const result = schema.safeParse(others);
    if (!result.success && result.error.issues.some((issue) => issue.path[0] === field)) required.add(field);
  }
  return required;
}

interface FieldDocs {
  /** JSON Schema of the fields (input side), as an object schema. */
  object: Json;
  properties: [name: string, schema: Json][];
  required: Set<string>;
}

function fieldDocs(schema: z.ZodObject): FieldDocs {
  const object = embedded(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Json);
  const properties = Object.entries((object.properties ?? {}) as Record<string, Json>);
  const required = requiredFields(schema);
  if (required.size > 0) object.required = [...required];
  return { object, properties, required };
}

function queryParameters(fields: FieldDocs): Json[] {
  return fields.properties.map(([name, property]) => {
    const { description, ...schema } = property;
    return {
      name,
      in: 'query',
      required: fields.required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema,
    };
  });
}

/** 400: one message per invalid field (`detail` for a body that is not an object, or a malformed one). */
function badRequest(fields: FieldDocs, reason?: string): Json {
  const properties: Record<string, Json> = {};
  for (const [name] of fields.properties) properties[name] = { type: 'string' };
  properties.detail = { type: 'string' };
  if (reason) properties.reason = { type: 'string', description: reason };
  return {
    description: 'Invalid parameters: one human-readable message per invalid field, every invalid field at once.',
    content: jsonContent({ type: 'object', properties, additionalProperties: false, minProperties: 1 }),
  };
}

const capitalized = (id: string) => `${id[0]!.toUpperCase()}${id.slice(1)}`;

function withDescription(base: Json, description: string): Json {
  return { ...base, description };
}

/**
 * The path as the document lists it: without its trailing slash (Redocly's no-path-trailing-slash),
 * once, so that every operationId is unique for the clients generated from the document.
 */
export function documentedPath(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

export interface OpenApiDocument {
  openapi: string;
  info: Json;
  paths: Record<string, Json>;
  components: Json;
  security: Json[];
  [key: string]: unknown;
}

/** The document of the operations, in their registration order. */
export function buildOpenApiDocument(operations: readonly ApiOperation[]): OpenApiDocument {
  // Named schemas: the shared ones, then each operation's 200 body not already among them.
  const registry = z.registry<{ id: string }>();
  const names = new Map<z.ZodType, string>();
  const name = (schema: z.ZodType, id: string) => {
    if (names.has(schema)) return;
    names.set(schema, id);
    registry.add(schema, { id });
  };
  for (const [id, schema] of Object.entries(SEARCH_COMPONENT_SCHEMAS)) name(schema, id);
  for (const op of operations) name(op.doc.response, `${capitalized(op.doc.operationId)}Response`);
  const generated = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => SCHEMAS + id,
  }).schemas as Record<string, Json>;
  const schemas: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(generated)) schemas[id] = embedded(schema);

  const shared = sharedResponses();
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const fields = op.fields && Object.keys(op.fields.shape).length > 0 ? fieldDocs(op.fields) : null;
    const own = op.doc.errors ?? {};
    const item: Json = (paths[documentedPath(op.path)] ??= {});
    for (const method of op.methods) {
      const responses: Json = {
        '200': {
          description: 'OK.',
          headers: {
            ...RATE_LIMIT_HEADERS,
            ...Object.fromEntries(Object.entries(op.doc.headers ?? {}).map(([h, d]) => [h, header(d)])),
          },
          content: jsonContent(ref(SCHEMAS, names.get(op.doc.response)!)),
        },
      };
      if (fields) responses['400'] = badRequest(fields, op.doc.reasonOn400);
      responses['401'] = ref(RESPONSES, 'Unauthorized');
      responses['403'] = ref(RESPONSES, 'Forbidden');
      if (own[404]) responses['404'] = withDescription(shared.NotFound as Json, own[404]);
      if (method === 'POST') {
        responses['413'] = ref(RESPONSES, 'PayloadTooLarge');
        responses['415'] = ref(RESPONSES, 'UnsupportedMediaType');
      }
      responses['429'] = ref(RESPONSES, 'TooManyRequests');
      if (own[502]) {
        const failure = op.doc.failure ? names.get(op.doc.failure)! : 'AllProvidersFailed';
        responses['502'] = { description: own[502], content: jsonContent(ref(SCHEMAS, failure)) };
      }
      responses['503'] = own[503]
        ? withDescription(
            shared.ServiceUnavailable as Json,
            `${(shared.ServiceUnavailable as Json).description} Or: ${own[503]}`,
          )
        : ref(RESPONSES, 'ServiceUnavailable');

      const operation: Json = {
        operationId: method === 'GET' ? op.doc.operationId : `${op.doc.operationId}Post`,
        summary: op.doc.summary,
        ...(op.doc.description ? { description: op.doc.description } : {}),
      };
      if (fields && method === 'GET') operation.parameters = queryParameters(fields);
      if (fields && method === 'POST') {
        // One named schema for both types: generators then type one body (orval sends it as a form).
        const body = `${capitalized(op.doc.operationId)}Request`;
        schemas[body] = fields.object;
        operation.requestBody = {
          required: true,
          content: {
            'application/x-www-form-urlencoded': { schema: ref(SCHEMAS, body) },
            [JSON_TYPE]: { schema: ref(SCHEMAS, body) },
          },
        };
      }
      operation.responses = responses;
      item[method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Sift API', version: '1', description: DESCRIPTION },
    // Relative: the API is at this document's own origin.
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas,
      responses: shared,
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: '`Authorization: Api-Key <key>` (keys look like `svc_sk_<prefix>.<secret>`).',
        },
        Bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <key>`.' },
        XApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: '`X-Api-Key: <key>`.' },
      },
    },
    security: [{ ApiKey: [] }, { Bearer: [] }, { XApiKey: [] }],
  };
}
