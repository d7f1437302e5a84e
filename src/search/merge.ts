import type { EngineResult, EngineSlice } from '../contracts/search.js';
import { descriptorOf } from '../providers/registry.js';
import type { EngineSlug } from './params.js';

export type { EngineResult, EngineSlice };

/*
 * Reciprocal Rank Fusion of the engines' ranked lists (reference section 5, web).
 *
 * - Engines are walked in slug order (provider_01 … provider_04), items in
 *   rank order, ranks from 0; each appearance adds 1 / (60 + rank).
 * - Duplicate key: the exact `url` string, as in the original service. No
 *   normalisation at all: `http://x/` and `https://x/`, `x.org/a` and
 *   `x.org/a/`, `www.` or letter case all stay distinct results. (A looser key
 *   would merge pages that really differ, e.g. case-sensitive paths.)
 * - The first-seen copy keeps its fields; later duplicates only add their
 *   engine and score.
 * - Sorted by total score, descending; ties keep first-seen order.
 * - `source`: the single slug, `both` for two engines, `all` for three or more.
 * - `source_label`: display names of the contributing engines except
 *   provider_01, in engine order, joined with " · ".
 */

export const RRF_K = 60;

export interface WebResult extends EngineResult {
  source: string;
  source_label: string;
}

export const SOURCE_LABEL_SEPARATOR = ' · ';

/** One merged result with what fusion knew of it (the SearXNG-compatible API shows the engines and ranks). */
export interface RankedResult {
  result: EngineResult;
  /** The summed reciprocal-rank contributions. */
  score: number;
  /** The engines that returned it, in engine order. */
  engines: EngineSlug[];
  /** Its 0-based rank in each of those engines' lists, in the same order. */
  ranks: number[];
}

interface Entry extends RankedResult {
  order: number;
}

/** Fuses per-engine lists, best first; `lists` must be in slug order. */
export function rankResults(
  lists: readonly { engine: EngineSlug; results: readonly EngineResult[] }[],
): RankedResult[] {
  const byUrl = new Map<string, Entry>();
  const entries: Entry[] = [];
  for (const { engine, results } of lists) {
    for (let rank = 0; rank < results.length; rank++) {
      const result = results[rank]!;
      const contribution = 1 / (RRF_K + rank);
      const existing = byUrl.get(result.url);
      if (existing) {
        existing.score += contribution;
        if (!existing.engines.includes(engine)) {
          existing.engines.push(engine);
          existing.ranks.push(rank);
        }
        continue;
      }
      const entry: Entry = { result, score: contribution, engines: [engine], ranks: [rank], order: entries.length };
      byUrl.set(result.url, entry);
      entries.push(entry);
    }
  }
  entries.sort((a, b) => b.score - a.score || a.order - b.order);
  return entries;
}

/** Merges per-engine lists; `lists` must be in slug order. */
export function mergeResults(lists: readonly { engine: EngineSlug; results: readonly EngineResult[] }[]): WebResult[] {
  return rankResults(lists).map(({ result, engines }) => ({
    title: result.title,
    url: result.url,
    description: result.description,
    display_url: result.display_url,
    favicon_url: result.favicon_url,
    age: result.age,
    source: sourceOf(engines),
    source_label: sourceLabel(engines),
    sitelinks: result.sitelinks,
  }));
}

export function sourceOf(engines: readonly EngineSlug[]): string {
  if (engines.length === 1) return engines[0]!;
  return engines.length === 2 ? 'both' : 'all';
}

export function sourceLabel(engines: readonly EngineSlug[]): string {
  const names: string[] = [];
  for (const e of engines) if (e !== 'provider_01') names.push(descriptorOf(e).name);
  return names.join(SOURCE_LABEL_SEPARATOR);
}

/** provider_01's altered query when it differs (case-insensitively) from the query, else "". */
export function correctionOf(query: string, altered: string): string {
  if (!altered) return '';
  return altered.toLowerCase() === query.toLowerCase() ? '' : altered;
}
