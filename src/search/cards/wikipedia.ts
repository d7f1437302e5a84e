import type { Config } from '../../config/index.js';
import type { WikipediaCard } from '../../contracts/cards.js';
import type { ProviderFlow } from '../../providers/types.js';
import {
  type WikipediaHit,
  WIKIPEDIA_MAX_QUERY,
  wikiLanguage,
  wikipediaSearchCall,
  wikipediaSummaryCall,
} from '../../providers/wikipedia/card.js';
import { WIKIPEDIA } from '../../providers/wikipedia/index.js';
import { bestMatch } from './relevance.js';

/*
 * The Wikipedia card (provider_08): search the `lang` wiki (default en), keep
 * the hit closest to the query whose title (or the redirect it matched
 * through) is relevant to it, then its page summary (redirects followed);
 * only a standard article makes a card (queries over 300 characters are not
 * sent: Wikipedia's search refuses them). Cached an hour per (query, wiki),
 * "no card" included. Safe search hiding happens after the cache (index.ts).
 */

/** The search hit the card is built from, or null when none is about the query. */
export function closestHit(hits: readonly WikipediaHit[], q: string): WikipediaHit | null {
  return bestMatch(hits, (h) => [h.title, h.redirecttitle], q, [q])?.candidate ?? null;
}

export function wikipediaFlow(
  q: string,
  lang: string,
  config: Pick<Config, 'WIKIPEDIA_BASE_URL'>,
): ProviderFlow<WikipediaCard | null> | null {
  // A query Wikipedia's search would refuse is not sent (the refusal would read as an outage).
  if ([...q].length > WIKIPEDIA_MAX_QUERY) return null;
  const wikiLang = wikiLanguage(lang);
  return {
    provider: WIKIPEDIA,
    key: JSON.stringify(['card', wikiLang, q]),
    async run(steps) {
      const hits = await steps.call(wikipediaSearchCall(q, wikiLang, config));
      const hit = closestHit(hits, q);
      if (!hit) return null;
      return steps.call(wikipediaSummaryCall(hit.title, wikiLang, config));
    },
  };
}
