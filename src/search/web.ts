import type { Config } from '../config/index.js';
import { braveWebCall } from '../providers/brave/web.js';
import { marginaliaCall } from '../providers/marginalia/web.js';
import { mojeekCall } from '../providers/mojeek/web.js';
import { staanAccepts, staanCall } from '../providers/staan/web.js';
import {
  type FailureReason,
  type ProviderCall,
  type ProviderDirectory,
  type Upstream,
  UpstreamError,
} from '../providers/types.js';
import { type SearchCache, stringBytes } from './cache.js';
import { createHighlighter, type Highlighter } from './highlight.js';
import { correctionOf, type EngineSlice, mergeResults, type WebResult } from './merge.js';
import { ENGINE_SLUGS, type EngineSlug, type WebParams, type WebQuery } from './params.js';

/*
 * GET /api/v1/web/: the configured engines in the requested scope are asked
 * concurrently (each bounded by its own timeout in the HTTP layer), their
 * slices cached per upstream request, then merged (merge.ts).
 */

export interface WebSearchDeps {
  config: Config;
  upstream: Upstream;
  providers: ProviderDirectory;
  cache: SearchCache;
}

export interface Unresponsive {
  engine: EngineSlug;
  reason: FailureReason;
}

export interface WebResponse {
  query: string;
  tab: 'web';
  page: number;
  engine: EngineSlug[];
  correction: string;
  results: WebResult[];
  unresponsive: Unresponsive[];
}

export type WebOutcome =
  | { status: 200; body: WebResponse }
  | { status: 502; body: { detail: string; unresponsive: Unresponsive[] } };

export const ALL_FAILED_DETAIL = 'All search providers failed.';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface EngineAdapter {
  /** How long a slice may be reused (the upstream's terms). */
  ttlMs: number;
  /** Whether the engine is asked at all for this query (Staan: pages 1-4, short queries). */
  accepts(query: WebQuery): boolean;
  call(query: WebQuery, config: Config): ProviderCall<EngineSlice>;
}

const always = () => true;

export const WEB_ENGINES: Readonly<Record<EngineSlug, EngineAdapter>> = {
  provider_01: { ttlMs: MINUTE, accepts: always, call: braveWebCall },
  provider_02: { ttlMs: HOUR, accepts: always, call: mojeekCall },
  provider_03: { ttlMs: HOUR, accepts: always, call: marginaliaCall },
  provider_04: { ttlMs: HOUR, accepts: staanAccepts, call: staanCall },
};

/** The engines of `scope` this instance will actually ask for `query`, in slug order. */
export function enginesToAsk(
  scope: readonly EngineSlug[],
  query: WebQuery,
  providers: ProviderDirectory,
): EngineSlug[] {
  return ENGINE_SLUGS.filter((e) => scope.includes(e) && providers.isConfigured(e) && WEB_ENGINES[e].accepts(query));
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

export async function searchWeb(deps: WebSearchDeps, params: WebParams): Promise<WebOutcome> {
  const query: WebQuery = { q: params.q, page: params.page, safe: params.safe, lang: params.lang, date: params.date };
  const asked = enginesToAsk(params.engine, query, deps.providers);

  let highlighter: Highlighter | undefined;
  // In place: a slice fresh from its adapter belongs to this search alone until it is cached.
  const highlight = (slice: EngineSlice): EngineSlice => {
    highlighter ??= createHighlighter(query.q);
    for (const r of slice.results) r.description = highlighter(r.description);
    return slice;
  };

  const settled = await Promise.allSettled(
    asked.map((engine) => {
      const adapter = WEB_ENGINES[engine];
      const call = adapter.call(query, deps.config);
      const key = `${engine} ${call.request.method ?? 'GET'} ${call.request.url}`;
      // Slices are cached already highlighted: the query is part of the key.
      return deps.cache.getOrFetch(key, adapter.ttlMs, sliceBytes, async () =>
        highlight(await deps.upstream.call(call)),
      );
    }),
  );

  const lists: { engine: EngineSlug; results: EngineSlice['results'] }[] = [];
  const unresponsive: Unresponsive[] = [];
  let correction = '';
  for (let i = 0; i < asked.length; i++) {
    const engine = asked[i]!;
    const outcome = settled[i]!;
    if (outcome.status === 'rejected') {
      const err = outcome.reason;
      unresponsive.push({ engine, reason: err instanceof UpstreamError ? err.reason : 'error' });
      continue;
    }
    const slice = outcome.value;
    if (engine === 'provider_01') correction = correctionOf(query.q, slice.altered);
    if (slice.results.length > 0) lists.push({ engine, results: slice.results });
  }

  if (asked.length > 0 && unresponsive.length === asked.length) {
    return { status: 502, body: { detail: ALL_FAILED_DETAIL, unresponsive } };
  }

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
