import type { FastifyInstance } from 'fastify';
import { homePath, sessionUser } from './guard.js';

/**
 * `GET /`: signed-in users go to their home page, everyone else to the sign-in form. With a query
 * (`/?q=…&format=json`, how LangChain Python's SearxSearchWrapper is pointed at an instance), a
 * search: SearXNG's index redirects it to /search with the same query string (308), and so does Sift.
 */
export async function homeRoute(app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    const q = (request.query as Record<string, unknown> | undefined)?.q;
    if ((typeof q === 'string' && q !== '') || (Array.isArray(q) && q.length > 0)) {
      const at = request.url.indexOf('?');
      return reply.redirect(`/search${request.url.slice(at)}`, 308);
    }
    const user = await sessionUser(request);
    return reply.redirect(user ? homePath(app.config) : '/login', 302);
  });
}
