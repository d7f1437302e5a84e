import { type ProviderSlug, UpstreamError } from './types.js';

/** Small helpers for the probes' parsers (which say precisely what is wrong). */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const probeFailure = (slug: ProviderSlug, message: string) => new UpstreamError(slug, 'bad_response', message);
