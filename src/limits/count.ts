import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** Monthly searches this request counts for; recorded only when the response is not an error. */
    searchUnits?: number;
    /** The searches were counted before the upstream was asked (translation): a 5xx answer still counts. */
    searchCountedBefore?: boolean;
  }
}

/**
 * Marks the request as counting `units` searches toward the user's monthly
 * usage (web: one per engine in scope; most endpoints: 1). The usage
 * recorder (usage.ts) writes it after a non-4xx/5xx response, off the
 * response path.
 */
export function countSearches(request: FastifyRequest, units: number, options: { before?: boolean } = {}): void {
  request.searchUnits = units;
  if (options.before) request.searchCountedBefore = true;
}
