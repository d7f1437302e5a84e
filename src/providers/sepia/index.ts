import type { ProviderDescriptor } from '../types.js';
import { SEPIA } from './slug.js';
import { sepiaVideosCall } from './videos.js';

export { SEPIA };

/** Sepia Search, the PeerTube video index (keyless). */
export const sepia: ProviderDescriptor = {
  slug: SEPIA,
  name: 'Sepia Search (PeerTube)',
  group: 'media',
  monitor: 'query',
  requires: [],
  baseUrlVariables: ['SEPIA_BASE_URL'],
  timeoutMs: 10_000,
  cacheTtlMs: 60 * 60_000,
  calls: { videos: sepiaVideosCall },
};
