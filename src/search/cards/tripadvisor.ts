import type { TripadvisorCard, TripadvisorHit } from '../../contracts/cards.js';
import { TRIPADVISOR } from '../../providers/tripadvisor/index.js';
import {
  type TripadvisorConfig,
  tripadvisorDetailsCall,
  tripadvisorLanguage,
  tripadvisorSearchCall,
} from '../../providers/tripadvisor/locations.js';
import type { ProviderFlow } from '../../providers/types.js';
import { closeness, identifyingTokens, isRelevant, sharesToken } from './relevance.js';
import { travelCategory } from './signals.js';

/*
 * The Tripadvisor card (provider_11): a location search (in the category the
 * query names, if exactly one), the hit that covers most of the query with
 * its name and its address (then: closest name), among hits whose name is
 * relevant to the query or the Wikipedia title or whose address shares a
 * word with the query ("pizzeria in lyon"); then its details, checked once
 * more the same way. Cached an hour per (query, lang, Wikipedia title), "no
 * card" included.
 */

/** The hit the card is built from, or null. */
export function closestLocation(
  hits: readonly TripadvisorHit[],
  q: string,
  references: string[],
): TripadvisorHit | null {
  const wanted = identifyingTokens(q);
  let best: { hit: TripadvisorHit; rank: number[] } | null = null;
  for (const [i, hit] of hits.entries()) {
    const nameMatches = isRelevant(hit.name, ...references);
    const placeMatches = sharesToken(q, hit.place);
    if (!nameMatches && !placeMatches) continue;
    const found = new Set([...identifyingTokens(hit.name), ...identifyingTokens(hit.place)]);
    let covered = 0;
    for (const t of wanted) if (found.has(t)) covered++;
    const coverage = wanted.size > 0 ? covered / wanted.size : 1;
    const close = Math.max(0, ...references.map((r) => closeness(hit.name, r)));
    const rank = [coverage, close, placeMatches ? 1 : 0, -i];
    if (best === null || compare(rank, best.rank) > 0) best = { hit, rank };
  }
  return best?.hit ?? null;
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

export function tripadvisorFlow(
  q: string,
  lang: string,
  wikipediaTitle: string,
  config: TripadvisorConfig,
): ProviderFlow<TripadvisorCard | null> {
  const language = tripadvisorLanguage(lang);
  const references = [q, wikipediaTitle].filter(Boolean);
  return {
    provider: TRIPADVISOR,
    key: JSON.stringify(['card', lang, q, wikipediaTitle]),
    async run(steps) {
      const hits = await steps.call(tripadvisorSearchCall(q, travelCategory(q), language, config));
      const hit = closestLocation(hits, q, references);
      if (!hit) return null;
      const card = await steps.call(tripadvisorDetailsCall(hit.location_id, language, config));
      const place = [card.address, card.geo].filter(Boolean).join(' ');
      if (!isRelevant(card.name, ...references) && !sharesToken(q, place)) return null;
      return card;
    },
  };
}
