import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { FRANKFURTER } from '../../providers/frankfurter/index.js';
import { latestRatesCall } from '../../providers/frankfurter/latest.js';
import { createRatesStore, type RatesStore } from './rates-store.js';
import type { InstantDeps } from './types.js';

/*
 * The instant answers' services, made once per app: `app.instant`, what the handlers use besides
 * the query (the config, the upstream runner, the stored currency rates). REST's /instant/ and the
 * SearXNG-compatible API's answers share it, and so one rates store.
 */

declare module 'fastify' {
  interface FastifyInstance {
    instant: InstantDeps;
  }
}

async function instantPlugin(app: FastifyInstance): Promise<void> {
  // A disabled feed (DISABLED_PROVIDERS=currency) is unconfigured everywhere: no currency answers at all.
  const rates: RatesStore = app.providers.isConfigured(FRANKFURTER)
    ? createRatesStore({
        pool: app.pool,
        fetchLatest: () => app.upstream.call(latestRatesCall(app.config)),
        log: app.log,
      })
    : { current: async () => null, reset() {} };
  app.decorate('instant', { config: app.config, upstream: app.upstream, rates, log: app.log } satisfies InstantDeps);
}

export default fastifyPlugin(instantPlugin, {
  name: 'sift-instant',
  dependencies: ['sift-upstream'],
  decorators: { fastify: ['config', 'pool'] },
});
