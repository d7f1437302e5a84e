import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Upstream } from '../providers/types.js';
import type { InstantDeps } from '../search/instant/types.js';
import type { SearchDeps } from '../search/web.js';

/*
 * What a request's features are given: the app's services, with an upstream that makes its calls
 * for the caller the API gate admitted (their share of each budget, the calls refused for their own
 * value: upstream/caller.ts). Every door (REST, SearXNG, Tavily; MCP through REST) builds them here.
 */

/** The app's upstream, bound to the request's admitted caller (as it is when the gate admitted none). */
export function upstreamFor(app: FastifyInstance, request: FastifyRequest): Upstream {
  const call = request.apiCall;
  return call?.outcome === 'admitted' ? app.upstream.for(call.caller) : app.upstream;
}

/** The search features' services for one request (web, media, maps, translation, suggestions, cards). */
export function searchDeps(app: FastifyInstance, request: FastifyRequest): SearchDeps {
  return { config: app.config, providers: app.providers, upstream: upstreamFor(app, request) };
}

/** The instant answers' services for one request. */
export function instantDeps(app: FastifyInstance, request: FastifyRequest): InstantDeps {
  return { ...app.instant, upstream: upstreamFor(app, request) };
}
