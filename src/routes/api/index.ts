import type { FastifyInstance } from 'fastify';
import { registerApiKeyAuthentication } from '../../auth/api-key-auth.js';
import { registerApiLimits } from '../../limits/api-limits.js';
import { instantRoute } from './instant.js';
import { cardsRoute } from './cards.js';
import { apiKeyRoute } from './key.js';
import { mediaRoutes } from './media.js';
import { apiRootRoute } from './root.js';
import { apiSchemaRoute } from './schema.js';
import { mapsRoute } from './maps.js';
import { apiStatusRoute } from './status.js';
import { suggestRoute } from './suggest.js';
import { translateRoute } from './translate.js';
import { webRoute } from './web.js';

const API_METHODS = ['GET', 'HEAD', 'POST'] as const;

/** What authentication, the limits and the search routes record on a request (see their `declare module`s). */
const REQUEST_STATE = [
  'apiKey',
  'rateLimit',
  'admission',
  'hurryAdmission',
  'searchUnits',
  'searchCountedBefore',
] as const;

/**
 * Everything under /api/v1/ (registered with that prefix). Order of checks on
 * every request, unknown paths included: authentication, then rate limits,
 * then the endpoint's parameter validation and handler.
 */
export async function apiRoutes(app: FastifyInstance): Promise<void> {
  // The properties the hooks and handlers below set on a request, made by Fastify's request
  // constructor: every API request then has one shape. Added one by one, in an order that differs
  // with the request's path through the hooks, they gave V8 several shapes to look properties up in.
  for (const name of REQUEST_STATE) app.decorateRequest(name, undefined);
  // 1. authentication (src/auth) — onRequest hook
  registerApiKeyAuthentication(app);
  // 2. rate limits and monthly quota (src/limits) — onRequest hook, after authentication
  registerApiLimits(app);
  // 3. endpoints, each recording its operation for the OpenAPI document (openapi.ts)
  app.decorate('apiOperations', []);
  // Called, not registered: a registered plugin is a context of its own, with its own Request and
  // Reply classes (fastify/lib/plugin-override.js), and Fastify's code shared by every route (the
  // route handler, the hook runners, reply.send) then sees one object shape per endpoint. With a
  // dozen, its property accesses go megamorphic (V8's slow generic lookups) on every request.
  // The routes add no hooks or decorators of their own, so they lose nothing by sharing this one.
  await apiRootRoute(app);
  await apiKeyRoute(app);
  await apiStatusRoute(app);
  await webRoute(app);
  await suggestRoute(app);
  await instantRoute(app);
  await mediaRoutes(app);
  await mapsRoute(app);
  await translateRoute(app);
  await cardsRoute(app);
  await apiSchemaRoute(app);

  // A known path with another method is 405 (after authentication and limits, like any API answer).
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    const allowed = API_METHODS.filter((method) => app.hasRoute({ method, url: path }));
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('Allow', allowed.join(', '))
        .send({ detail: `Method "${request.method}" not allowed.` });
    }
    return reply.code(404).send({ detail: 'Not found.' });
  });
}
