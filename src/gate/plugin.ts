import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { type ApiKeyAuthenticator, createApiKeyAuthenticator } from '../auth/api-key-auth.js';
import type { AdmissionSettings } from '../limits/admission.js';
import { type ApiGate, createApiGate } from './api-gate.js';

/*
 * The API gate's services, made once per app and shared by every door: `app.apiKeys`, the key
 * cache (the gate identifies keys with it; the keys page tells it of a revoked key), and
 * `app.apiGate`, the gate every API scope guards itself with.
 */

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyAuthenticator;
    apiGate: ApiGate;
  }
}

export interface GatePluginOptions {
  /** The time the gate decides at (ms since the epoch; tests move it); default the database's clock. */
  clock?: AdmissionSettings['clock'];
}

async function gatePlugin(app: FastifyInstance, options: GatePluginOptions): Promise<void> {
  const authenticator = createApiKeyAuthenticator();
  app.decorate('apiKeys', authenticator);
  app.decorate('apiGate', createApiGate(app, { authenticator, clock: options.clock }));
}

export default fastifyPlugin(gatePlugin, {
  name: 'sift-gate',
  decorators: { fastify: ['config', 'pool', 'lifecycle'] },
});
