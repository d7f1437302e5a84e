import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { rejectMediaWikiError } from '../mediawiki.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { WIKIDATA } from './slug.js';

/*
 * Wikidata (provider_09): what kind of thing an item is, for the cards.
 *
 * 1. Classes: GET {WIKIDATA_BASE_URL}/w/api.php?action=wbgetclaims
 *    &entity=<Q…>&property=P31 (instance of) or P279 (subclass of)&format=json
 *    -> claims.<P>[].mainsnak.datavalue.value.id (class item ids).
 * 2. Labels: GET {WIKIDATA_BASE_URL}/w/api.php?action=wbgetentities
 *    &ids=<Q…|Q…>&props=labels&languages=en&format=json
 *    -> entities.<id>.labels.en.value (English class names, lower-cased here).
 * Errors come as HTTP 200 with {"error": {"code", "info"}}: a failure.
 *
 * Sources: Wikibase API documentation on mediawiki.org (wbgetclaims,
 * wbgetentities) and the Wikidata properties P31 and P279.
 */

/** Item ids accepted (anything else is never sent upstream). */
export const WIKIDATA_ITEM = /^Q[1-9][0-9]{0,11}$/;
/** Classes kept per property (an item rarely has more; the labels call takes at most 50 ids). */
export const MAX_CLASSES = 25;

const claim = z.object({
  mainsnak: nested({ datavalue: nested({ value: nested({ id: text }) }) }),
});

export function parseClaimIds(property: string) {
  const schema = body({ claims: nested({ [property]: list(claim) }) });
  return (json: unknown): string[] => {
    rejectMediaWikiError(json);
    const claims = schema.parse(json).claims[property] as z.output<typeof claim>[];
    const ids: string[] = [];
    for (const c of claims) {
      const id = c.mainsnak.datavalue.value.id;
      if (WIKIDATA_ITEM.test(id) && !ids.includes(id)) ids.push(id);
    }
    return ids.slice(0, MAX_CLASSES);
  };
}

export function wikidataClaimsCall(
  item: string,
  property: 'P31' | 'P279',
  config: Pick<Config, 'WIKIDATA_BASE_URL'>,
): ProviderCall<string[]> {
  const params = new URLSearchParams({ action: 'wbgetclaims', entity: item, property, format: 'json' });
  return {
    provider: WIKIDATA,
    request: { url: `${config.WIKIDATA_BASE_URL}/w/api.php?${params}` },
    parse: parseClaimIds(property),
  };
}

const entitiesSchema = body({ entities: z.unknown().optional() });
const entitySchema = nested({ labels: nested({ en: nested({ value: text }) }) });

/** Lower-cased English labels by item id (items without one are left out). */
export function parseLabels(json: unknown): Record<string, string> {
  rejectMediaWikiError(json);
  const { entities } = entitiesSchema.parse(json);
  const out: Record<string, string> = {};
  if (entities === null || typeof entities !== 'object' || Array.isArray(entities)) return out;
  for (const [id, entity] of Object.entries(entities as Record<string, unknown>)) {
    const label = entitySchema.parse(entity).labels.en.value.trim().toLowerCase();
    if (label) out[id] = label;
  }
  return out;
}

export function wikidataLabelsCall(
  ids: readonly string[],
  config: Pick<Config, 'WIKIDATA_BASE_URL'>,
): ProviderCall<Record<string, string>> {
  const params = new URLSearchParams({
    action: 'wbgetentities',
    ids: ids.join('|'),
    props: 'labels',
    languages: 'en',
    format: 'json',
  });
  return {
    provider: WIKIDATA,
    request: { url: `${config.WIKIDATA_BASE_URL}/w/api.php?${params}` },
    parse: parseLabels,
  };
}
