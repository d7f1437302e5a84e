import type { FastifyInstance } from 'fastify';
import { homeRoute } from './home.js';
import { keysRoutes } from './keys.js';
import { loginRoutes } from './login.js';

/** Server-rendered pages of the accounts feature: `/`, sign-in and sign-out, and the API keys page. */
export async function accountPages(app: FastifyInstance): Promise<void> {
  await app.register(homeRoute);
  await app.register(loginRoutes);
  await app.register(keysRoutes);
}
