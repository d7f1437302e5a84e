import type { ProviderDescriptor } from '../types.js';
import { worldNewsCall } from './news.js';
import { WORLD_NEWS } from './slug.js';

export { WORLD_NEWS };

/** World News API (never cached, as the original). */
export const worldnews: ProviderDescriptor = {
  slug: WORLD_NEWS,
  name: 'World News API',
  group: 'media',
  monitor: 'query',
  requires: ['WORLDNEWS_API_KEY'],
  baseUrlVariables: ['WORLDNEWS_BASE_URL'],
  timeoutMs: 10_000,
  cacheTtlMs: 0,
  calls: { news: worldNewsCall },
};
