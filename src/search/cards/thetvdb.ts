import type { TvdbCard, TvdbHit } from '../../contracts/cards.js';
import {
  type TvdbConfig,
  thetvdbExtendedCall,
  thetvdbLoginCall,
  thetvdbSearchCall,
  tvdbLanguage,
} from '../../providers/thetvdb/api.js';
import { THETVDB } from '../../providers/thetvdb/index.js';
import { type FlowSteps, type ProviderCall, type ProviderFlow, UpstreamError } from '../../providers/types.js';
import { bestMatch } from './relevance.js';

/*
 * The TheTVDB card (provider_10). Log in (the token is kept 25 days across
 * requests; a 401 on a later call means it was revoked: it is dropped and
 * the call retried once after a fresh login), search by the Wikipedia title
 * without its "(disambiguator)" or else the query, keep the film and series
 * hits with a name (or translation, or alias) relevant to the query or the
 * Wikipedia title, take the one closest to the query, and build the card
 * from its extended record. A probe (no sign that the query is a film or a
 * show, only a title-like query) needs a close match. Cached an hour per
 * (query, lang, search term, probe), "no card" included.
 */

/** A token is kept this long (TheTVDB's are valid about a month). */
export const TOKEN_TTL_MS = 25 * 24 * 60 * 60_000;
/** A probe's best hit must be at least this close to the query. */
export const PROBE_MATCH_MIN = 0.6;

const TOKEN = 'token';

/** `build(token)`'s call with the kept token; on a 401, once more with a fresh one. */
async function authorized<T>(
  steps: FlowSteps,
  config: TvdbConfig,
  build: (token: string) => ProviderCall<T>,
): Promise<T> {
  const token = () => steps.memo(TOKEN, TOKEN_TTL_MS, () => steps.call(thetvdbLoginCall(config)));
  const first = await token();
  try {
    return await steps.call(build(first));
  } catch (err) {
    if (!(err instanceof UpstreamError) || err.status !== 401) throw err;
    steps.forget(TOKEN);
    return steps.call(build(await token()));
  }
}

/** The Wikipedia title without its "(…)" disambiguators, or the query. */
export function searchTerm(q: string, wikipediaTitle: string): string {
  return wikipediaTitle.replace(/\s*\([^)]*\)/g, '').trim() || q;
}

export function bestHit(hits: readonly TvdbHit[], q: string, wikipediaTitle: string) {
  const references = [wikipediaTitle, q].filter(Boolean);
  return bestMatch(hits, (h) => [h.name, ...h.otherNames], q, references);
}

export function thetvdbFlow(
  q: string,
  lang: string,
  wikipediaTitle: string,
  probe: boolean,
  config: TvdbConfig,
): ProviderFlow<TvdbCard | null> {
  const term = searchTerm(q, wikipediaTitle);
  const lang3 = tvdbLanguage(lang);
  return {
    provider: THETVDB,
    key: JSON.stringify(['card', lang, q, term, wikipediaTitle, probe]),
    async run(steps) {
      const hits = await authorized(steps, config, (token) => thetvdbSearchCall(term, token, config));
      const best = bestHit(hits, q, wikipediaTitle);
      if (!best || (probe && best.closeness < PROBE_MATCH_MIN)) return null;
      const hit = best.candidate;
      return authorized(steps, config, (token) => thetvdbExtendedCall(hit, lang3, token, config));
    },
  };
}
