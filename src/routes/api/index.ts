import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
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
import { contentsRoute } from './contents.js';

const API_METHODS = ['GET', 'HEAD', 'POST'] as const;

/**
 * Everything under /api/v1/ (registered with that prefix). Order of checks on every request,
 * unknown paths included: the gate (key, rate limits, quota: gate/api-gate.ts), then the
 * endpoint's parameter validation and handler.
 */
async function apiRoutesScope(app: FastifyInstance): Promise<void> {
  // Every request, unknown paths included: the API gate (key, limits, quota, usage).
  app.apiGate.guard(app, { limited: true });
  // The API's bodies are form-encoded fields or JSON; any other type is 415, text/plain included.
  app.removeContentTypeParser('text/plain');
  // Each endpoint records its operation for the OpenAPI document (openapi.ts).
  app.decorate('apiOperations', []);
  // Called, not registered: the endpoints share this scope and its gate.
  await apiRootRoute(app);
  await apiKeyRoute(app);
  await apiStatusRoute(app);
  await webRoute(app, app.contents);
  if (app.contents) await contentsRoute(app, app.contents);
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

/** Registered by the app (app.ts) after the services it uses, which Fastify checks by name. */
export const apiRoutes = fastifyPlugin(apiRoutesScope, {
  name: 'sift-api',
  encapsulate: true,
  dependencies: ['sift-upstream', 'sift-contents', 'sift-gate', 'sift-instant'],
});
