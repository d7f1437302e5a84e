import type { FastifyInstance } from 'fastify';
import { latestRatesCall } from '../../providers/frankfurter/latest.js';
import { instant } from '../../search/instant/index.js';
import { createRatesStore, type RatesStore } from '../../search/instant/rates-store.js';
import type { InstantDeps } from '../../search/instant/types.js';
import { instantQuerySchema } from '../../search/queries.js';
import { instantResponseSchema } from '../../search/response-schemas.js';
import { registerSearchRoute } from './search-route.js';

/**
 * `GET /api/v1/instant/`: an instant answer or null (spec 2.9, docs/api.md): always 200 `{query, answer}` for a valid q. Counts one search,
 * before the answer is looked for.
 */
const depsOfApp = new WeakMap<object, InstantDeps>();

/** The instant answers' services of an app, made once: REST and the SearXNG-compatible API share one rates store. */
export function instantDepsOf(app: FastifyInstance): InstantDeps {
  let deps = depsOfApp.get(app.upstream);
  if (!deps) {
    // A disabled feed (DISABLED_PROVIDERS=currency) is unconfigured everywhere: no currency answers at all.
    const rates: RatesStore = app.providers.isConfigured('currency')
      ? createRatesStore({
          pool: app.pool,
          fetchLatest: () => app.upstream.call(latestRatesCall(app.config)),
          log: app.log,
        })
      : { current: async () => null, reset() {} };
    deps = { config: app.config, upstream: app.upstream, rates, log: app.log };
    depsOfApp.set(app.upstream, deps);
  }
  return deps;
}

export async function instantRoute(app: FastifyInstance): Promise<void> {
  const deps = instantDepsOf(app);
  registerSearchRoute(app, {
    path: '/instant/',
    schema: instantQuerySchema,
    units: () => 1,
    count: 'before',
    handle: async (params, request) => {
      const userAgent = request.headers['user-agent'];
      const body = await instant(deps, {
        q: params.q,
        lang: params.lang,
        ip: request.ip ?? '',
        userAgent: typeof userAgent === 'string' ? userAgent : '',
        log: request.log,
      });
      return { status: 200, body };
    },
    doc: {
      operationId: 'instant',
      summary: 'Instant answer',
      description:
        'An instant answer (maths, conversions, weather, currency, clocks, hashes, QR codes, IP…) or null. Counts one search.',
      response: instantResponseSchema,
    },
  });
}
