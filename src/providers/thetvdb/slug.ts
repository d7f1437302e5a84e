import type { ProviderSlug } from '../types.js';

/**
 * TheTVDB's slug, named here once. A module of its own: the adapters use it, and the descriptor
 * (index.ts), which re-exports it for the features, imports the adapters.
 */
export const THETVDB = 'provider_10' as const satisfies ProviderSlug;
