import type { FastifyInstance } from 'fastify';

/**
 * Everything under /api/v1/ (registered with that prefix). Order of checks on
 * every request, unknown paths included: authentication, then rate limits,
 * then the endpoint's parameter validation and handler.
 */
export async function apiRoutes(app: FastifyInstance): Promise<void> {
  // 1. authentication (src/auth) — onRequest hook
  // 2. rate limits and monthly quota (src/limits) — onRequest hook, after authentication
  // 3. endpoints

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not found.' }));
}
