import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { body, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { braveAcceptsQuery, braveHeaders } from './common.js';

/*
 * Brave Suggest (health recorded under provider_01): GET {BRAVE_BASE_URL}/suggest/search?q=
 * with the separate BRAVE_SUGGEST_API_KEY. The non-empty results[].query
 * strings, at most SUGGEST_LIMIT.
 */

export const SUGGEST_LIMIT = 7;

const schema = body({ results: list(z.object({ query: text })) });

export type BraveSuggestConfig = Pick<Config, 'BRAVE_SUGGEST_API_KEY' | 'BRAVE_BASE_URL'>;

export function parseBraveSuggest(json: unknown): string[] {
  const out: string[] = [];
  for (const r of schema.parse(json).results) {
    if (r.query.trim() === '') continue;
    out.push(r.query);
    if (out.length === SUGGEST_LIMIT) break;
  }
  return out;
}

/** null without BRAVE_SUGGEST_API_KEY (nothing to ask with). */
export function braveSuggestCall(q: string, config: BraveSuggestConfig): ProviderCall<string[]> | null {
  if (!config.BRAVE_SUGGEST_API_KEY || !braveAcceptsQuery(q)) return null;
  return {
    provider: 'provider_01',
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/suggest/search?${new URLSearchParams({ q })}`,
      headers: braveHeaders(config.BRAVE_SUGGEST_API_KEY),
    },
    parse: parseBraveSuggest,
    ownCredential: true,
  };
}
