import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifySession from '@fastify/session';
import type { FastifyInstance } from 'fastify';
import { resolveSecretKey } from '../../config/secret-key.js';
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

/**
 * Cookies, Postgres-backed sessions and CSRF tokens for the web pages.
 * buildApp registers them in the pages' own context, so the API and the
 * health endpoints never parse a cookie or load a session.
 * Cookies are httpOnly and SameSite=Lax, and Secure when the request came
 * over HTTPS (as TRUST_PROXY lets Fastify see it).
 */
export async function registerWebSessions(app: FastifyInstance): Promise<void> {
  const secret = resolveSecretKey(app.config);
  await app.register(fastifyCookie, { secret });

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
