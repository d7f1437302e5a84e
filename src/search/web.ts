import type { Config } from '../config/index.js';
import type { EngineSlice, WebQuery } from '../contracts/search.js';
import { BRAVE } from '../providers/brave/index.js';
import { stringBytes } from '../upstream/cache.js';
import { providersOffering } from '../providers/registry.js';
import { unresponsiveOf } from '../upstream/runner.js';
import type { ProviderDirectory, ProviderSlug, Unresponsive, Upstream, WebEngineCalls } from '../providers/types.js';
import { createHighlighter, type Highlighter } from './highlight.js';
import { correctionOf, mergeResults } from './merge.js';
import { noAnswer, notConfigured, type SearchOutcome } from './outcome.js';
import type { EngineSlug, WebParams } from './queries.js';
import type { WebSearchResult } from './web-contents.js';

/*
 * GET /api/v1/web/: parse -> gather -> merge. The configured engines in the
 * requested scope that accept the query are asked concurrently (each bounded
 * by its own timeout), their slices cached per upstream request by the
 * runner, then merged (merge.ts).
 */

export interface SearchDeps {
  config: Config;
  upstream: Upstream;
  providers: ProviderDirectory;
}

export interface WebResponse {
  query: string;
  tab: 'web';
  page: number;
  engine: EngineSlug[];
  correction: string;
  results: WebSearchResult[];
  unresponsive: Unresponsive[];
}

const WEB_ENGINES = new Map<ProviderSlug, WebEngineCalls>(providersOffering('web').map((p) => [p.slug, p.calls.web]));

/** The engines of `scope` this instance will actually ask for `query`, in slug order. */
export function enginesToAsk(
  scope: readonly EngineSlug[],
  query: WebQuery,
  providers: ProviderDirectory,
): EngineSlug[] {
  return scope.filter((e) => providers.isConfigured(e) && (WEB_ENGINES.get(e)?.accepts?.(query) ?? true));
}

function sliceBytes(slice: EngineSlice): number {
  let n = 64 + stringBytes(slice.altered);
  for (const r of slice.results) {
    n +=
      96 +
      stringBytes(r.title) +
      stringBytes(r.url) +
      stringBytes(r.description) +
      stringBytes(r.display_url) +
      stringBytes(r.favicon_url) +
      stringBytes(r.age) +
      r.sitelinks.length * 256;
  }
  return n;
}

/** What the engines in scope answered for a query, before merging. */
export interface GatheredWeb {
  query: WebQuery;
  /** The non-empty result lists, in slug order (what `mergeResults` and `rankResults` take). */
  lists: { engine: EngineSlug; results: EngineSlice['results'] }[];
  correction: string;
  unresponsive: Unresponsive[];
}

/** Asks the engines in scope at once (the web endpoint merges their lists; so does the SearXNG-compatible API). */
export async function gatherWeb(deps: SearchDeps, params: WebParams): Promise<SearchOutcome<GatheredWeb>> {
  const query: WebQuery = { q: params.q, page: params.page, safe: params.safe, lang: params.lang, date: params.date };
  const scope = params.engine.filter((e) => WEB_ENGINES.has(e));
  // A configured engine that sits this query out (Staan past page 4) still counts as configured.
  if (scope.length > 0 && !scope.some((e) => deps.providers.isConfigured(e))) {
    return notConfigured(deps.providers, scope, 'web search engine in the requested scope');
  }
  const asked = enginesToAsk(scope, query, deps.providers);

  let highlighter: Highlighter | undefined;
  const tasks = asked.map((engine) => {
    const call = WEB_ENGINES.get(engine)!.call(query, deps.config);
    return {
      ...call,
      // Highlighted in place as it is parsed, so slices are cached highlighted (the query is part of the key).
      parse(body: unknown): EngineSlice {
        const slice = call.parse(body);
        highlighter ??= createHighlighter(query.q);
        for (const r of slice.results) r.description = highlighter(r.description);
        return slice;
      },
      size: sliceBytes,
    };
  });
  const outcomes = await deps.upstream.gather(tasks);

  const lists: GatheredWeb['lists'] = [];
  let correction = '';
  for (const outcome of outcomes) {
    if (!outcome.ok) continue;
    const slice = outcome.value;
    if (outcome.provider === BRAVE) correction = correctionOf(query.q, slice.altered);
    if (slice.results.length > 0) lists.push({ engine: outcome.provider, results: slice.results });
  }
  if (asked.length > 0 && !outcomes.some((o) => o.ok)) return noAnswer(outcomes);

  return { status: 200, body: { query, lists, correction, unresponsive: unresponsiveOf(outcomes) } };
}

export async function searchWeb(deps: SearchDeps, params: WebParams): Promise<SearchOutcome<WebResponse>> {
  const gathered = await gatherWeb(deps, params);
  if (gathered.status !== 200) return gathered;
  const { query, lists, correction, unresponsive } = gathered.body;
  return {
    status: 200,
    body: {
      query: query.q,
      tab: 'web',
      page: query.page,
      engine: params.engine,
      correction,
      results: mergeResults(lists),
      unresponsive,
    },
  };
}
