import { limitsOfWindows, rateLimitWindows } from '../rate-limit-headers.js';
import type { ProviderDescriptor } from '../types.js';
import { braveImagesCall } from './images.js';
import { braveNewsCall } from './news.js';
import { BRAVE } from './slug.js';
import { braveSuggestCall } from './suggest.js';
import { braveVideosCall } from './videos.js';
import { braveWebAccepts, braveWebCall } from './web.js';

export { BRAVE };

/** Brave Search API: web, images, news and videos (and suggest with its own key). */
export const brave: ProviderDescriptor = {
  slug: BRAVE,
  name: 'Brave Search',
  group: 'engine',
  monitor: 'query',
  requires: ['BRAVE_API_KEY'],
  optional: ['BRAVE_SUGGEST_API_KEY'],
  baseUrlVariables: ['BRAVE_BASE_URL'],
  timeoutMs: 3000,
  // Brave's terms: results may be stored for at most a minute.
  cacheTtlMs: 60_000,
  // Brave reports both its windows on every answer (per second, per month): Sift paces by them, and
  // on Brave's own host, until the first report, at its free plan's one request a second.
  terms: {
    source: 'https://api-dashboard.search.brave.com/app/documentation/web-search/rate-limiting',
    hosts: ['api.search.brave.com'],
  },
  limitsReport: {
    source: 'https://api-dashboard.search.brave.com/app/documentation/web-search/rate-limiting',
    read: (headers) => limitsOfWindows(rateLimitWindows(headers, [1, 2_592_000])),
    untilReported: { limit: 1, windowSeconds: 1 },
  },
  calls: {
    web: { call: braveWebCall, accepts: braveWebAccepts },
    suggest: braveSuggestCall,
    images: braveImagesCall,
    news: braveNewsCall,
    videos: braveVideosCall,
  },
};
