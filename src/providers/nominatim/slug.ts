import type { ProviderSlug } from '../types.js';

/**
 * OpenStreetMap Nominatim's slug, named here once. A module of its own: the adapters use it, and the descriptor
 * (index.ts), which re-exports it for the features, imports the adapters.
 */
export const NOMINATIM = 'provider_13' as const satisfies ProviderSlug;
