import type { Config } from '../../config/index.js';
import type { MediaQuery } from '../../contracts/search.js';
import type { ProviderCall } from '../types.js';
import { BRAVE_MAX_PAGE, braveAcceptsQuery, braveHeaders, braveRefusal } from './common.js';
import { BRAVE } from './slug.js';
import { braveWebParams } from './web.js';

/*
 * What Brave's news and video searches share (provider_01): GET
 * {BRAVE_BASE_URL}/news/search or /videos/search with the parameters of web
 * search (web.ts), not asked past page 10 (no call, no refusal), refusals read
 * as web search's (common.ts). Each answer is parsed by its own adapter
 * (news.ts, videos.ts).
 */

export type BraveMediaConfig = Pick<Config, 'BRAVE_API_KEY' | 'BRAVE_BASE_URL'>;

/** The call of one news or videos page, or null when Brave is not asked. */
export function braveMediaCall<T>(
  search: 'news' | 'videos',
  query: MediaQuery,
  config: BraveMediaConfig,
  parse: (json: unknown) => T[],
): ProviderCall<T[]> | null {
  if (query.page > BRAVE_MAX_PAGE || !braveAcceptsQuery(query.q)) return null;
  const params = braveWebParams(query);
  return {
    provider: BRAVE,
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/${search}/search?${params}`,
      headers: braveHeaders(config.BRAVE_API_KEY),
    },
    parse,
    refusal: (status, text) => braveRefusal(status, text, params),
  };
}
