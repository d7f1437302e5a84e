import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifySession from '@fastify/session';
import type { FastifyInstance } from 'fastify';
import { resolveSecretKey } from '../config/secret-key.js';
import { PgSessionStore } from './session-store.js';

declare module 'fastify' {
  interface Session {
    /** The signed-in user. */
    userId?: number;
    /** A one-time message for the next page (never a secret). */
    notice?: string;
  }
}

export const SESSION_COOKIE = 'sift_session';
export const CSRF_COOKIE = 'sift_csrf';
export const SESSION_LIFETIME_MS = 14 * 24 * 3600 * 1000;

/** Paths that never use sessions: the API authenticates every request by key. */
function isApiPath(url: string): boolean {
  return url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');
}

/**
 * Cookies, Postgres-backed sessions, CSRF tokens and form bodies for the
 * whole app (registered on the root instance so every page can use them).
 * Cookies are httpOnly and SameSite=Lax, and Secure when the request came
 * over HTTPS (as TRUST_PROXY lets Fastify see it). API requests never load
 * a session, and never get a cookie.
 */
export async function registerWebSessions(app: FastifyInstance): Promise<void> {
  const secret = resolveSecretKey(app.config);
  await app.register(fastifyFormbody);
  await app.register(fastifyCookie, { secret });

  // Before the session hook: an API request's cookies are not looked at,
  // so a browser calling the API never costs a session lookup.
  app.addHook('onRequest', async (request) => {
    if (isApiPath(request.url)) request.cookies = {};
  });

  await app.register(fastifySession, {
    secret,
    cookieName: SESSION_COOKIE,
    store: new PgSessionStore(app.pool, (err) => app.log.warn({ err }, 'could not prune expired sessions')),
    saveUninitialized: false,
    rolling: false,
    cookie: { path: '/', httpOnly: true, sameSite: 'lax', secure: 'auto', maxAge: SESSION_LIFETIME_MS },
  });

  await app.register(fastifyCsrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', secure: 'auto', signed: true },
  });
}
