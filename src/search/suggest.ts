import type { Config } from '../config/index.js';
import { braveSuggestCall } from '../providers/brave/suggest.js';
import type { Upstream } from '../providers/types.js';
import { type SearchCache, stringBytes } from './cache.js';

/*
 * GET /api/v1/suggest/: Brave Suggest with its own key (BRAVE_SUGGEST_API_KEY).
 * Without that key: no suggestions and no upstream call. A failed call (recorded
 * under provider_01 by the runner) also gives no suggestions; successes are
 * cached for 60 s.
 */

export const SUGGEST_TTL_MS = 60_000;

export interface SuggestDeps {
  config: Config;
  upstream: Upstream;
  cache: SearchCache;
}

export interface SuggestResponse {
  query: string;
  suggestions: string[];
}

const listBytes = (list: string[]) => list.reduce((n, s) => n + stringBytes(s) + 8, 32);

export async function suggest(deps: SuggestDeps, q: string): Promise<SuggestResponse> {
  if (!deps.config.BRAVE_SUGGEST_API_KEY) return { query: q, suggestions: [] };
  const call = braveSuggestCall(q, deps.config);
  try {
    const suggestions = await deps.cache.getOrFetch(`suggest GET ${call.request.url}`, SUGGEST_TTL_MS, listBytes, () =>
      deps.upstream.call(call),
    );
    return { query: q, suggestions };
  } catch {
    return { query: q, suggestions: [] };
  }
}
