import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { admitted, runAhead } from '../../limits/api-limits.js';
import { countSearches } from '../../limits/count.js';
import type { SearchOutcome } from '../../search/outcome.js';
import { type FieldErrors, parseQuery } from '../../search/params.js';
import { describeRoute, type RouteDoc } from './openapi.js';

/*
 * The one way a search endpoint is registered under /api/v1/:
 * - both slash forms (`/images/` and `/images`), HEAD answered as GET;
 * - parameters validated by the endpoint's zod schema (400 with one message
 *   per invalid field, after the rate limits: a refused request gets its
 *   429/503 first);
 * - the handler starts while the rate limits are still being decided
 *   (limits/run-ahead.ts), with its outcome held safely until then;
 * - the outcome mapped to its status: 200, 502 (every provider asked
 *   failed), 503 (nothing configured in scope);
 * - the searches the request counts toward monthly usage, counted after a
 *   200 (or, with `count: 'before'`, also when the handler answers 5xx);
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
  /** Checks of the raw input before the schema (a POST body that is not an object): errors answer 400 like the schema's. */
  precheck?(raw: unknown, request: FastifyRequest): FieldErrors | null;
  /** Monthly searches one request counts. */
  units(params: z.output<S>): number;
  /** 'after' (default): counted on a 200 only. 'before': counted as the upstream is asked, so a 5xx counts too. */
  count?: 'after' | 'before';
  /** The outcome, or a promise of it (an outcome found without waiting, like an instant answer, is sent sooner). */
  handle(params: z.output<S>, request: FastifyRequest): SearchOutcome<B> | Promise<SearchOutcome<B>>;
  /** Writes a 200 body's JSON itself, the same text as JSON.stringify's but sooner (default: Fastify's serializer). */
  json?(body: B): string;
  /** The endpoint in the OpenAPI document (its parameters come from `schema`). */
  doc?: RouteDoc;
}

/** The content type Fastify gives the JSON it serializes, for the bodies a route writes itself. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const defaultInput = (request: FastifyRequest): unknown => (request.method === 'POST' ? request.body : request.query);

export function registerSearchRoute<S extends z.ZodObject, B>(app: FastifyInstance, route: SearchRoute<S, B>): void {
  const input = route.input ?? defaultInput;
  /** The body to send for an outcome, once the request is admitted: its searches counted, its status and headers set. */
  const finish = (request: FastifyRequest, reply: FastifyReply, params: z.output<S>, outcome: SearchOutcome<B>) => {
    if (outcome.status === 200 || route.count === 'before') {
      countSearches(request, route.units(params), { before: route.count === 'before' });
    }
    if ('headers' in outcome && outcome.headers) reply.headers(outcome.headers);
    // The body is returned, not sent: a handler that returns the reply makes Fastify wait on the
    // reply (Reply.then: a listener for the response's end) on every request.
    reply.code(outcome.status);
    if (route.json && outcome.status === 200) {
      reply.header('content-type', JSON_CONTENT_TYPE);
      return route.json(outcome.body);
    }
    return outcome.body;
  };
  /** A request whose rate-limit decision is still pending: the handler runs ahead of it (run-ahead.ts). */
  const afterDecision = async (request: FastifyRequest, reply: FastifyReply, params: z.output<S>) => {
    // async: an outcome given at once (or a throw) becomes a promise, as runAhead's work must be.
    const ran = await runAhead(request, reply, async () => route.handle(params, request));
    return ran ? finish(request, reply, params, ran.value) : reply;
  };
  /** For parameters that fail validation: the limits' refusal first, else the 400. */
  const invalid = async (request: FastifyRequest, reply: FastifyReply, errors: FieldErrors) =>
    (await admitted(request, reply)) ? reply.code(400).send(errors) : reply;
  // Not async: a request already admitted (a lease, or no limits) whose outcome is found at once
  // is answered without a promise or a turn of the microtask queue (Fastify sends a value a
  // handler returns); one that waits returns its promise.
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const raw = input(request);
    const pre = route.precheck?.(raw, request) ?? null;
    const parsed = pre ? { ok: false as const, errors: pre } : parseQuery(route.schema, raw);
    if (!parsed.ok) return invalid(request, reply, parsed.errors);
    const params = parsed.value;
    if (request.admission) return afterDecision(request, reply, params);
    const outcome = route.handle(params, request);
    return outcome instanceof Promise
      ? outcome.then((found) => finish(request, reply, params, found))
      : finish(request, reply, params, outcome);
  };
  const options = { config: { runsAhead: true } };
  const paths = [route.path, route.path.slice(0, -1)];
  for (const method of route.methods ?? ['GET']) {
    for (const url of paths) app.route({ method, url, handler, ...options });
  }
  if (route.doc) {
    describeRoute(app, { path: route.path, methods: route.methods ?? ['GET'], fields: route.schema, doc: route.doc });
  }
}
