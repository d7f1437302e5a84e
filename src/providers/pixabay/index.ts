import { limitsOfWindows, rateLimitWindows } from '../rate-limit-headers.js';
import type { ProviderDescriptor } from '../types.js';
import { pixabayImagesCall } from './images.js';
import { PIXABAY } from './slug.js';

export { PIXABAY };

/** Pixabay image search (its terms: answers cached for 24 hours). */
export const pixabay: ProviderDescriptor = {
  slug: PIXABAY,
  name: 'Pixabay',
  group: 'media',
  monitor: 'query',
  requires: ['PIXABAY_API_KEY'],
  baseUrlVariables: ['PIXABAY_BASE_URL'],
  credentialParameters: ['key'],
  timeoutMs: 10_000,
  cacheTtlMs: 24 * 60 * 60_000,
  // 100 requests per 60 s by default, reported on every answer: Sift stops when it reports none left.
  limitsReport: {
    source: 'https://pixabay.com/api/docs/#api_rate_limit',
    read: (headers) => limitsOfWindows(rateLimitWindows(headers, [60])),
  },
  calls: { images: pixabayImagesCall },
};
