import type { EngineResult, EngineSlice } from '../contracts/search.js';
import { BRAVE } from '../providers/brave/index.js';
import { descriptorOf } from '../providers/registry.js';
import type { EngineSlug } from './queries.js';

export type { EngineResult, EngineSlice };

/*
 * Reciprocal Rank Fusion of the engines' ranked lists (reference section 5, web).
 *
 * - Engines are walked in slug order (provider_01 … provider_04), items in
 *   rank order, ranks from 0; each appearance adds 1 / (60 + rank).
 * - Duplicate key: a canonical form of the URL (canonicalUrl), not the URL
 *   as sent: engines spell one page differently (Marginalia percent-encodes
 *   what Brave writes as is, http or https, a `www.` or not, a trailing
 *   slash, a default port, a fragment, `utm_*` tracking parameters), and
 *   agreement between engines is what RRF rewards. Paths keep their case and
 *   query strings their order: pages that really differ stay apart.
 * - The first-seen copy (the first engine in slug order, at its best rank)
 *   keeps its fields, its `url` included: the canonical form is never shown.
 *   Later duplicates only add their engine and score.
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
      const key = canonicalUrl(result.url);
      const existing = byUrl.get(key);
      if (existing) {
        existing.score += contribution;
        if (!existing.engines.includes(engine)) {
          existing.engines.push(engine);
          existing.ranks.push(rank);
        }
        continue;
      }
      const entry: Entry = { result, score: contribution, engines: [engine], ranks: [rank], order: entries.length };
      byUrl.set(key, entry);
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
    published: result.published,
    source: sourceOf(engines),
    source_label: sourceLabel(engines),
    sitelinks: result.sitelinks,
  }));
}

/** Query parameters that only track a visit (campaign tags, click ids): they never change the page. */
const TRACKING_PARAMETERS: ReadonlySet<string> = new Set([
  'fbclid',
  'gclid',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'msclkid',
  'yclid',
  'twclid',
  'ttclid',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_hsenc',
  '_hsmi',
  'mkt_tok',
]);

const isTracking = (name: string): boolean => name.startsWith('utm_') || TRACKING_PARAMETERS.has(name);

/** Characters a path segment may hold literally (RFC 3986 pchar less `%`): their escapes are decoded. */
const PATH_LITERAL = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/;
/** Characters a query may hold literally, less the ones that delimit or encode its pairs (`&`, `=`, `+`). */
const QUERY_LITERAL = /[A-Za-z0-9\-._~!$'()*,;:@/?]/;

/**
 * One spelling of percent-encoding: an escape of a character that may stand literally is decoded,
 * every other escape is kept with upper-case hex (the URL parser has already escaped what must be).
 */
function normalizeEscapes(text: string, literal: RegExp): string {
  if (!text.includes('%')) return text;
  return text.replace(/%([0-9A-Fa-f]{2})/g, (sequence, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return literal.test(ch) ? ch : sequence.toUpperCase();
  });
}

/**
 * The form of a URL that merging compares (never shown): scheme-insensitive for http and https,
 * host in lower case without a leading `www.` or a trailing dot, no default port, no fragment,
 * one spelling of percent-encoding, no trailing slash on the path, no tracking parameters.
 * A string that is not a URL is its own key.
 */
export function canonicalUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return raw;
  }
  const web = u.protocol === 'http:' || u.protocol === 'https:';
  if (!web || !u.hostname) return u.href.replace(/#.*$/s, '');
  let host = u.hostname.replace(/\.$/, '');
  if (host.startsWith('www.') && host.length > 4) host = host.slice(4);
  const port = u.port === '80' || u.port === '443' ? '' : u.port;
  let path = normalizeEscapes(u.pathname, PATH_LITERAL);
  while (path.endsWith('/')) path = path.slice(0, -1);
  let query = '';
  if (u.search.length > 1) {
    const kept: string[] = [];
    for (const pair of u.search.slice(1).split('&')) {
      if (pair === '') continue;
      const name = pair.split('=', 1)[0]!;
      if (isTracking(normalizeEscapes(name, QUERY_LITERAL).toLowerCase())) continue;
      kept.push(normalizeEscapes(pair, QUERY_LITERAL));
    }
    if (kept.length > 0) query = `?${kept.join('&')}`;
  }
  return `${host}${port ? `:${port}` : ''}${path}${query}`;
}

export function sourceOf(engines: readonly EngineSlug[]): string {
  if (engines.length === 1) return engines[0]!;
  return engines.length === 2 ? 'both' : 'all';
}

export function sourceLabel(engines: readonly EngineSlug[]): string {
  const names: string[] = [];
  for (const e of engines) if (e !== BRAVE) names.push(descriptorOf(e).name);
  return names.join(SOURCE_LABEL_SEPARATOR);
}

/** provider_01's altered query when it differs (case-insensitively) from the query, else "". */
export function correctionOf(query: string, altered: string): string {
  if (!altered) return '';
  return altered.toLowerCase() === query.toLowerCase() ? '' : altered;
}
