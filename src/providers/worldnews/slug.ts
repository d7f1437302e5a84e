import type { ProviderSlug } from '../types.js';

/**
 * World News API's slug, named here once. A module of its own: the adapters use it, and the descriptor
 * (index.ts), which re-exports it for the features, imports the adapters.
 */
export const WORLD_NEWS = 'provider_07' as const satisfies ProviderSlug;
