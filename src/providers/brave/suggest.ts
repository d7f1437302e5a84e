import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { body, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { braveAcceptsQuery, braveHeaders, braveRefusal } from './common.js';
import { BRAVE } from './slug.js';

/*
 * Brave Suggest (health recorded under provider_01): GET {BRAVE_BASE_URL}/suggest/search
 * ?q=&count=<SUGGEST_LIMIT> with the separate BRAVE_SUGGEST_API_KEY. Brave's
 * API reference for suggest: count 1-20, default 5 (so without it no more than
 * five come back); also lang and country, not sent (the endpoint takes only q).
 * Response: {"type": "suggest", "query": {"original"}, "results": [{"query"}]}
 * (Brave's published sample). The non-empty results[].query strings, at most
 * SUGGEST_LIMIT.
 */

export const SUGGEST_LIMIT = 7;

const schema = body({ results: list(z.object({ query: text })) });

export type BraveSuggestConfig = Pick<Config, 'BRAVE_SUGGEST_API_KEY' | 'BRAVE_BASE_URL'>;

export function parseBraveSuggest(json: unknown): string[] {
  const out: string[] = [];
  for (const r of schema.parse(json).results) {
    const query = r.query.replace(/\s+/g, ' ').trim();
    if (query === '') continue;
    out.push(query);
    if (out.length === SUGGEST_LIMIT) break;
  }
  return out;
}

/** null without BRAVE_SUGGEST_API_KEY (nothing to ask with). */
export function braveSuggestCall(q: string, config: BraveSuggestConfig): ProviderCall<string[]> | null {
  if (!config.BRAVE_SUGGEST_API_KEY || !braveAcceptsQuery(q)) return null;
  const params = new URLSearchParams({ q, count: String(SUGGEST_LIMIT) });
  return {
    provider: BRAVE,
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/suggest/search?${params}`,
      headers: braveHeaders(config.BRAVE_SUGGEST_API_KEY),
    },
    parse: parseBraveSuggest,
    refusal: (status, text) => braveRefusal(status, text, params),
    ownCredential: true,
  };
}
