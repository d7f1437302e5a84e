import type { FastifyInstance } from 'fastify';
import { homePath, sessionUser } from './guard.js';

/** `GET /`: signed-in users go to their home page, everyone else to the sign-in form. */
export async function homeRoute(app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    const user = await sessionUser(request);
    return reply.redirect(user ? homePath(app.config) : '/login', 302);
  });
}
