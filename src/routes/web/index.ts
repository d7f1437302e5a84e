import type { FastifyInstance } from 'fastify';
import { homeRoute } from './home.js';
import { keysRoutes } from './keys.js';
import { loginRoutes } from './login.js';

/**
 * Server-rendered pages of the accounts feature: `/`, sign-in and sign-out, and the API keys page,
 * called in the caller's context rather than registered (routes/api/index.ts says why).
 */
export async function accountPages(app: FastifyInstance): Promise<void> {
  await homeRoute(app);
  await loginRoutes(app);
  await keysRoutes(app);
}
