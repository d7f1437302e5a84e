import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import type { SessionUser } from '../../auth/types.js';
import { findUserById } from '../../auth/users.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user on web pages guarded by requireUser. */
    user?: SessionUser;
  }
}

/*
 * Web pages: who is signed in. Use `requireUser` as a route's preHandler;
 * it sets request.user or redirects to /login?next=<this page>.
 */

/** Where a signed-in user lands by default. */
export function homePath(config: Pick<Config, 'STATUS_PAGE_ENABLED'>): string {
  return config.STATUS_PAGE_ENABLED ? '/status' : '/settings/keys';
}

/** The signed-in, still active user of this request's session, or null. Ends the session of a disabled user. */
export async function sessionUser(request: FastifyRequest): Promise<SessionUser | null> {
  const userId = request.session?.get('userId');
  if (typeof userId !== 'number') return null;
  let user: Awaited<ReturnType<typeof findUserById>>;
  try {
    user = await findUserById(request.server.pool, userId);
  } catch (cause) {
    throw Object.assign(new Error('Could not load the signed-in user', { cause }), { statusCode: 503 });
  }
  if (!user?.isActive) {
    await request.session.destroy();
    return null;
  }
  return { id: user.id, username: user.username, isStaff: user.isStaff };
}

export function loginUrl(next?: string): string {
  // Slashes stay readable (/login?next=/status); everything else is percent-encoded.
  return next && next !== '/' ? `/login?next=${encodeURIComponent(next).replace(/%2F/gi, '/')}` : '/login';
}

/** preHandler for pages that need a signed-in user. */
export async function requireUser(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const user = await sessionUser(request);
  if (user) {
    request.user = user;
    return undefined;
  }
  const next = request.method === 'GET' || request.method === 'HEAD' ? request.url : undefined;
  return reply.redirect(loginUrl(next), 302);
}

/** The layout's data for a page: the user, a CSRF token for its forms, whether Status is linked. */
export function pageContext(
  request: FastifyRequest,
  reply: FastifyReply,
): { user: SessionUser | null; csrfToken: string; statusPageEnabled: boolean } {
  return {
    user: request.user ?? null,
    csrfToken: reply.generateCsrf(),
    statusPageEnabled: request.server.config.STATUS_PAGE_ENABLED,
  };
}
