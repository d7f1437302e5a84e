import type { Config } from '../config/index.js';
import type { ImageResult, MediaQuery, NewsResult, VideoResult } from '../contracts/search.js';
import { providersOffering } from '../providers/registry.js';
import { unresponsiveOf } from '../upstream/runner.js';
import type { ProviderCall, ProviderSlug, Unresponsive } from '../providers/types.js';
import { noAnswer, notConfigured, type SearchOutcome } from './outcome.js';
import { ENGINE_SLUGS, type EngineSlug, type ImagesParams, type WebParams } from './queries.js';
import type { SearchDeps } from './web.js';

/*
 * GET /api/v1/images/, /news/, /videos/ (and the image search behind
 * /images/similar/): parse -> gather -> blend, one pipeline for the three.
 *
 * - The providers of a tab are every provider offering its call
 *   (`providersOffering('images' | 'news' | 'videos')`). A web engine among
 *   them (Brave) is asked only when `engine` names it; the others (Pixabay,
 *   World News, Sepia) are blended whenever configured, whatever `engine` says.
 * - Blend order: images and news put the engines first (Brave, then Pixabay /
 *   World News); videos put them last (Sepia, then Brave). Registry order
 *   within each group.
 * - Blend = round-robin interleave of the non-empty lists in that order.
 * - 503 when no provider in the scope is configured (naming what is missing),
 *   400 when none answered and one refused the caller's value (Pixabay past
 *   its last page), 502 when every provider asked failed; otherwise 200 with
 *   `unresponsive`.
 */

export type MediaTab = 'images' | 'news' | 'videos';

export interface MediaResultOf {
  images: ImageResult;
  news: NewsResult;
  videos: VideoResult;
}

/** Round-robin merge: one item from each list in turn, each list keeping its order. */
export function interleave<T>(lists: readonly (readonly T[])[]): T[] {
  const out: T[] = [];
  const longest = lists.reduce((n, l) => Math.max(n, l.length), 0);
  for (let i = 0; i < longest; i++) {
    for (const list of lists) if (i < list.length) out.push(list[i]!);
  }
  return out;
}

const TABS: Readonly<Record<MediaTab, { what: string; enginesFirst: boolean }>> = {
  images: { what: 'image search provider', enginesFirst: true },
  news: { what: 'news search provider', enginesFirst: true },
  videos: { what: 'video search provider', enginesFirst: false },
};

type BuildCall<R> = (query: MediaQuery, config: Config) => ProviderCall<R[]> | null;

interface MediaProvider<R> {
  slug: ProviderSlug;
  build: BuildCall<R>;
  /** A web engine: asked only when `engine` names it. */
  engine: boolean;
}

const ENGINE_SET: ReadonlySet<ProviderSlug> = new Set(ENGINE_SLUGS);

function providersOf<T extends MediaTab>(tab: T): MediaProvider<MediaResultOf[T]>[] {
  const all = providersOffering(tab).map(
    (p): MediaProvider<MediaResultOf[T]> => ({
      slug: p.slug,
      build: p.calls[tab] as BuildCall<MediaResultOf[T]>,
      engine: ENGINE_SET.has(p.slug),
    }),
  );
  const engines = all.filter((p) => p.engine);
  const others = all.filter((p) => !p.engine);
  return TABS[tab].enginesFirst ? [...engines, ...others] : [...others, ...engines];
}

const PROVIDERS: { [T in MediaTab]: MediaProvider<MediaResultOf[T]>[] } = {
  images: providersOf('images'),
  news: providersOf('news'),
  videos: providersOf('videos'),
};

export interface Blended<R> {
  results: R[];
  unresponsive: Unresponsive[];
}

/** Each provider's answer, in blend order (the SearXNG-compatible API names the provider of each result). */
export interface GatheredMedia<R> {
  lists: { provider: ProviderSlug; results: R[] }[];
  unresponsive: Unresponsive[];
}

/** Asks the configured providers of the scope at once and interleaves their answers. */
export async function blendMedia<T extends MediaTab>(
  deps: SearchDeps,
  tab: T,
  query: MediaQuery,
  engine: readonly EngineSlug[],
): Promise<SearchOutcome<Blended<MediaResultOf[T]>>> {
  const gathered = await gatherMedia(deps, tab, query, engine);
  if (gathered.status !== 200) return gathered;
  const { lists, unresponsive } = gathered.body;
  return { status: 200, body: { results: interleave(lists.map((l) => l.results)), unresponsive } };
}

/** Asks the configured providers of the scope at once; their non-empty lists in blend order. */
export async function gatherMedia<T extends MediaTab>(
  deps: SearchDeps,
  tab: T,
  query: MediaQuery,
  engine: readonly EngineSlug[],
): Promise<SearchOutcome<GatheredMedia<MediaResultOf[T]>>> {
  const providers: MediaProvider<MediaResultOf[T]>[] = PROVIDERS[tab];
  const scope = providers.filter((p) => !p.engine || engine.includes(p.slug));
  // A configured provider that sits this query out (Brave past its last page) still counts as configured.
  if (scope.length > 0 && !scope.some((p) => deps.providers.isConfigured(p.slug))) {
    return notConfigured(
      deps.providers,
      scope.map((p) => p.slug),
      `${TABS[tab].what} in the requested scope`,
    );
  }
  const tasks: ProviderCall<MediaResultOf[T][]>[] = [];
  for (const p of scope) {
    if (!deps.providers.isConfigured(p.slug)) continue;
    const call = p.build(query, deps.config);
    if (call) tasks.push(call);
  }
  const outcomes = await deps.upstream.gather(tasks);
  const lists: GatheredMedia<MediaResultOf[T]>['lists'] = [];
  for (const o of outcomes) if (o.ok && o.value.length > 0) lists.push({ provider: o.provider, results: o.value });
  if (tasks.length > 0 && !outcomes.some((o) => o.ok)) return noAnswer(outcomes);
  return { status: 200, body: { lists, unresponsive: unresponsiveOf(outcomes) } };
}

/** News and videos take exactly the web search parameters. */
export type MediaParams = WebParams;

export interface MediaResponse<T extends MediaTab> {
  query: string;
  tab: T;
  page: number;
  engine: EngineSlug[];
  results: MediaResultOf[T][];
  unresponsive: Unresponsive[];
}

async function searchTab<T extends MediaTab>(
  deps: SearchDeps,
  tab: T,
  params: MediaParams,
): Promise<SearchOutcome<MediaResponse<T>>> {
  const query: MediaQuery = { q: params.q, page: params.page, safe: params.safe, lang: params.lang, date: params.date };
  const blended = await blendMedia(deps, tab, query, params.engine);
  if (blended.status !== 200) return blended;
  return {
    status: 200,
    body: {
      query: query.q,
      tab,
      page: query.page,
      engine: params.engine,
      results: blended.body.results,
      unresponsive: blended.body.unresponsive,
    },
  };
}

export function searchImages(deps: SearchDeps, params: ImagesParams): Promise<SearchOutcome<MediaResponse<'images'>>> {
  return searchTab(deps, 'images', { ...params, date: '' });
}

export function searchNews(deps: SearchDeps, params: MediaParams): Promise<SearchOutcome<MediaResponse<'news'>>> {
  return searchTab(deps, 'news', params);
}

export function searchVideos(deps: SearchDeps, params: MediaParams): Promise<SearchOutcome<MediaResponse<'videos'>>> {
  return searchTab(deps, 'videos', params);
}
