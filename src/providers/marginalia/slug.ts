import type { ProviderSlug } from '../types.js';

/**
 * Marginalia's slug, named here once. A module of its own: the adapters use it, and the descriptor
 * (index.ts), which re-exports it for the features, imports the adapters.
 */
export const MARGINALIA = 'provider_03' as const satisfies ProviderSlug;
