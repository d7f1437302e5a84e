import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type GatePlan, gatedRoute } from '../../gate/api-gate.js';
import type { SearchOutcome } from '../../search/outcome.js';
import { type FieldErrors, parseFields, parseQuery } from '../../search/query-string.js';
import { describeRoute, type RouteDoc } from './openapi.js';

/*
 * The one way a search endpoint is registered under /api/v1/:
 * - both slash forms (`/images/` and `/images`), HEAD answered as GET;
 * - its plan for the API gate (gate/api-gate.ts): a GET's parameters are parsed before admission,
 *   so that the searches it counts are reserved with it; a POST's body is parsed by the handler;
 * - parameters validated by the endpoint's zod schema (400 with one message per invalid field,
 *   after admission: a refused request gets its 429/503 first);
 * - the outcome mapped to its status: 200, 502 (every provider asked failed), 503 (nothing
 *   configured in scope); an answer that does not count gives its searches back (the gate);
 * - with its `doc`, described in the OpenAPI document (openapi.ts).
 */

export interface SearchRoute<S extends z.ZodObject, B> {
  /** Path below the API prefix, with its trailing slash: `/images/`. */
  path: `/${string}/`;
  /** Default GET (HEAD comes with it); translation adds POST. */
  methods?: readonly ('GET' | 'POST')[];
  schema: S;
  /** The raw fields to validate (default: the query string; a POST's parsed body for POST). */
  input?(request: FastifyRequest): unknown;
  /** A POST's body is JSON whose values keep their types (lists, numbers, booleans), not form fields. */
  jsonBody?: true;
  /** Checks of the raw input before the schema (a POST body that is not an object): errors answer 400 like the schema's. */
  precheck?(raw: unknown, request: FastifyRequest): FieldErrors | null;
  /** Monthly searches one request counts (a POST's are reserved before its body is read: no `params` then). */
  units(params: z.output<S> | undefined): number;
  /** 'after' (default): counted on a success only. 'before': counted as the upstream is asked, so a 5xx counts too. */
  count?: 'after' | 'before';
  /** Runs the feature for validated parameters: its outcome, mapped to the response's status. */
  handle(params: z.output<S>, request: FastifyRequest): Promise<RouteOutcome<B>>;
  /** The endpoint in the OpenAPI document (its parameters come from `schema`). */
  doc?: RouteDoc;
}

/**
 * A search's outcome, or one of the answers only page contents give: a 502 naming why the site's
 * page was not read, and a 429 when a POST's pages pass the monthly quota.
 */
export type RouteOutcome<B> =
  | SearchOutcome<B>
  | { status: 502; body: { detail: string; reason: string; status?: number } }
  | { status: 429; body: { detail: string }; headers?: Record<string, string> };

type Parsed<S extends z.ZodObject> = { ok: true; value: z.output<S> } | { ok: false; errors: FieldErrors };

const defaultInput = (request: FastifyRequest): unknown => (request.method === 'POST' ? request.body : request.query);

export function registerSearchRoute<S extends z.ZodObject, B>(app: FastifyInstance, route: SearchRoute<S, B>): void {
  const input = route.input ?? defaultInput;
  const validate = (request: FastifyRequest): Parsed<S> => {
    const raw = input(request);
    const errors = route.precheck?.(raw, request) ?? null;
    if (errors) return { ok: false, errors };
    return route.jsonBody && request.method === 'POST' ? parseFields(route.schema, raw) : parseQuery(route.schema, raw);
  };

  const plan = (request: FastifyRequest): GatePlan<Parsed<S>> => {
    const countsOnServerError = route.count === 'before';
    if (request.method === 'POST') return { metered: true, units: route.units(undefined), countsOnServerError };
    const parsed = validate(request);
    return { metered: true, units: parsed.ok ? route.units(parsed.value) : 0, countsOnServerError, parsed };
  };

  const paths = [route.path, route.path.slice(0, -1)];
  for (const method of route.methods ?? ['GET']) {
    for (const url of paths) {
      gatedRoute(app, {
        method,
        url,
        plan,
        // Parsed when the gate planned the request (a GET); a POST's body is parsed now.
        async handler(request, reply, planned) {
          const parsed = planned ?? validate(request);
          if (!parsed.ok) return reply.code(400).send(parsed.errors);
          const outcome = await route.handle(parsed.value, request);
          if ('headers' in outcome && outcome.headers) reply.headers(outcome.headers);
          reply.code(outcome.status);
          return outcome.body;
        },
      });
    }
  }
  if (route.doc) {
    describeRoute(app, { path: route.path, methods: route.methods ?? ['GET'], fields: route.schema, doc: route.doc });
  }
}
