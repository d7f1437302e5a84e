import type { Config } from '../config/index.js';
import { providersOffering } from '../providers/registry.js';
import type { Upstream } from '../providers/types.js';

/*
 * GET /api/v1/suggest/: Brave Suggest with its own key (BRAVE_SUGGEST_API_KEY).
 * Without that key: no suggestions and no upstream call. A failed call (recorded
 * under provider_01 by the runner) also gives no suggestions; successes are
 * cached by the runner for the provider's TTL (60 s).
 */

export interface SuggestDeps {
  config: Config;
  upstream: Upstream;
}

export interface SuggestResponse {
  query: string;
  suggestions: string[];
}

const SUGGESTERS = providersOffering('suggest').map((p) => p.calls.suggest);

export async function suggest(deps: SuggestDeps, q: string): Promise<SuggestResponse> {
  for (const build of SUGGESTERS) {
    const call = build(q, deps.config);
    if (!call) continue;
    const [outcome] = await deps.upstream.gather([call]);
    if (outcome?.ok) return { query: q, suggestions: outcome.value };
  }
  return { query: q, suggestions: [] };
}
