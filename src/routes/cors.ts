import type { FastifyCorsOptions, FastifyCorsOptionsDelegateCallback } from '@fastify/cors';

/*
 * CORS for browser clients (CORS_ORIGINS; registered only when it is set).
 * A web front-end on an allowed origin may call the API, and the health
 * endpoints, with its key in a header. Its preflight `OPTIONS` is answered
 * 204 by @fastify/cors's onRequest hook at the root, so before the API's
 * authentication and rate limits (a preflight carries no credentials and
 * counts nothing). Everything else stays same-origin: the pages (cookies,
 * CSRF) never get CORS headers, and neither does an origin not listed.
 * No credentials mode: API keys travel in headers, never in cookies.
 */

/** Request headers a cross-origin caller may send (the key in `Authorization: Api-Key …`/`Bearer …` or `X-Api-Key`). */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'X-Api-Key', 'X-Monitor-Token', 'Content-Type', 'X-Request-Id'];

/** Response headers a cross-origin caller may read: the rate-limit state, the wait after a 429/503, the request id. */
export const CORS_EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id'];

/** How long a browser may reuse a preflight answer (seconds; browsers cap it, Chromium at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 600;

/** The paths CORS applies to: the API and the health endpoints. */
const IN_SCOPE = /^\/(?:api\/|status\/health(?:[/?]|$))/;

/** @fastify/cors options for CORS_ORIGINS: exact origins (as the schema normalised them), or `*` for any. */
export function corsOptions(origins: readonly string[]): FastifyCorsOptions {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  const granted = {
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
    // Any OPTIONS from an allowed origin is answered as a preflight (no 400 for a missing request-method header).
    strictPreflight: false,
  };
  // Two parameters: @fastify/cors calls it with a callback, per request.
  const delegator: FastifyCorsOptionsDelegateCallback = (request, callback) => {
    const origin = request.headers.origin;
    const ok = typeof origin === 'string' && IN_SCOPE.test(request.url) && (anyOrigin || allowed.has(origin));
    // origin false: no CORS headers, and an OPTIONS is not answered as a preflight.
    callback(null, ok ? { ...granted, origin: anyOrigin ? '*' : origin } : { origin: false });
  };
  return { hideOptionsRoute: true, delegator };
}
