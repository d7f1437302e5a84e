import type { ProviderSlug } from '../types.js';

/**
 * Open-Meteo's slug, named here once. A module of its own: the adapters use it, and the descriptor
 * (index.ts), which re-exports it for the features, imports the adapters.
 */
export const OPEN_METEO = 'weather' as const satisfies ProviderSlug;
