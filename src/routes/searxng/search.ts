import type { MediaQuery } from '../../contracts/search.js';
import { providersOffering } from '../../providers/registry.js';
import type { Unresponsive } from '../../providers/types.js';
import { type CardsResponse, searchCards } from '../../search/cards/index.js';
import { answerText } from '../../search/instant/answer-text.js';
import { instantAnswer } from '../../search/instant/index.js';
import type { InstantAnswer, InstantDeps, InstantLog } from '../../search/instant/types.js';
import { type MapsDeps, searchMaps } from '../../search/maps.js';
import { gatherMedia, interleave, type MediaTab } from '../../search/media.js';
import { rankResults } from '../../search/merge.js';
import type { SearchOutcome } from '../../search/outcome.js';
import { suggest } from '../../search/suggest.js';
import { gatherWeb, type SearchDeps } from '../../search/web.js';
import type { Category } from '../../search/engines.js';
import { type SearxQuery, scopeEngines } from './params.js';
import {
  imageResult,
  infoboxesOf,
  mapResult,
  newsResult,
  unresponsiveEngines,
  videoResult,
  webResult,
} from './results.js';

/*
 * One SearXNG search: each category asked for runs as Sift's search of it (general -> web,
 * images, news, videos, map -> maps), at once, with the instant answer and the knowledge cards
 * on page 1; the results are listed category by category. Like Sift's own endpoints, an outage
 * never reads as "nothing matched": 502 when every provider asked failed and nothing else was
 * found, 503 when nothing asked is configured.
 */

type Json = Record<string, unknown>;

/** The engines that give query suggestions. */
const SUGGESTING: readonly string[] = providersOffering('suggest').map((p) => p.slug);

export interface SearxResponse {
  query: string;
  number_of_results: number;
  results: Json[];
  answers: string[];
  corrections: string[];
  infoboxes: Json[];
  suggestions: string[];
  unresponsive_engines: [string, string][];
}

export type SearxOutcome =
  | { status: 200; body: SearxResponse }
  | { status: 400 | 502 | 503; detail: string; unresponsive: Unresponsive[]; headers?: Record<string, string> };

/** Sift's parameter names as SearXNG's, for an upstream's refusal of a value the caller gave. */
const SEARXNG_NAMES: Readonly<Record<string, string>> = { page: 'pageno', lang: 'language', date: 'time_range' };

const describeRefusal = (errors: Record<string, string>) =>
  Object.entries(errors)
    .map(([field, message]) => `${SEARXNG_NAMES[field] ?? field}: ${message}`)
    .join(' ');

/** Who asked (the instant answers use the address and user agent: "what is my ip"). */
export interface Asker {
  ip: string;
  userAgent: string;
  log?: InstantLog;
}

interface Part {
  results: Json[];
  correction?: string;
  unresponsive: Unresponsive[];
}

type PartOutcome = { status: 200; part: Part } | Exclude<SearchOutcome<never>, { status: 200 }>;

async function runCategory(deps: SearchDeps & MapsDeps, category: Category, query: SearxQuery): Promise<PartOutcome> {
  const engine = scopeEngines(query.categories.get(category));
  const { q, page, safe, lang, date } = query;
  if (category === 'general') {
    const gathered = await gatherWeb(deps, { q, engine, safe, lang, page, date });
    if (gathered.status !== 200) return gathered;
    const { lists, correction, unresponsive } = gathered.body;
    return { status: 200, part: { results: rankResults(lists).map(webResult), correction, unresponsive } };
  }
  if (category === 'map') {
    // Nominatim has one page of places.
    if (page > 1) return { status: 200, part: { results: [], unresponsive: [] } };
    const found = await searchMaps(deps, { q, limit: undefined, lang, lat: '', lon: '', label: '' });
    if (found.status !== 200) return found;
    return { status: 200, part: { results: found.body.places.map(mapResult), unresponsive: [] } };
  }
  const tab: MediaTab = category;
  // No image provider filters by date.
  const media: MediaQuery = { q, page, safe, lang, date: tab === 'images' ? '' : date };
  const gathered = await gatherMedia(deps, tab, media, engine);
  if (gathered.status !== 200) return gathered;
  const { lists, unresponsive } = gathered.body;
  const shaped = lists.map(({ provider, results }) =>
    results.map((r, i) =>
      tab === 'images'
        ? imageResult(r as never, provider, i)
        : tab === 'news'
          ? newsResult(r as never, provider, i)
          : videoResult(r as never, provider, i),
    ),
  );
  return { status: 200, part: { results: interleave(shaped), unresponsive } };
}

export async function searxSearch(
  deps: SearchDeps & MapsDeps,
  instantDeps: InstantDeps,
  query: SearxQuery,
  asker: Asker,
): Promise<SearxOutcome> {
  const { q, lang, safe } = query;
  const parts = Promise.all([...query.categories.keys()].map((c) => runCategory(deps, c, query)));
  const cards: Promise<CardsResponse | null> = query.cards
    ? searchCards(deps, { q, lang, safe, engine: scopeEngines(query.categories.get('general') ?? 'all') }).then((o) =>
        o.status === 200 ? o.body : null,
      )
    : Promise.resolve(null);
  const answer: Promise<InstantAnswer | null> =
    query.page === 1
      ? instantAnswer(instantDeps, { q, lang, ip: asker.ip, userAgent: asker.userAgent, log: asker.log })
      : Promise.resolve(null);
  // Query suggestions for a page-1 web search from the engines asked that give them (Brave, with
  // Brave Suggest's key), as SearXNG fills `suggestions`; none when that call fails.
  const webScope: readonly string[] = scopeEngines(query.categories.get('general'));
  const suggested: Promise<string[]> =
    query.page === 1 && SUGGESTING.some((slug) => webScope.includes(slug))
      ? suggest(deps, q).then(
          (s) => s.suggestions.filter((x) => x.trim().toLowerCase() !== q.trim().toLowerCase()),
          () => [],
        )
      : Promise.resolve([]);
  const [outcomes, cardsBody, found, suggestions] = await Promise.all([parts, cards, answer, suggested]);

  const results: Json[] = [];
  const corrections: string[] = [];
  const unresponsive: Unresponsive[] = [];
  let succeeded = false;
  const failures: Exclude<PartOutcome, { status: 200 }>[] = [];
  for (const o of outcomes) {
    if (o.status === 200) {
      succeeded = true;
      results.push(...o.part.results);
      if (o.part.correction) corrections.push(o.part.correction);
      unresponsive.push(...o.part.unresponsive);
    } else {
      failures.push(o);
      if (o.status === 502) unresponsive.push(...o.body.unresponsive);
    }
  }
  const infoboxes = cardsBody ? infoboxesOf(cardsBody) : [];
  const text = found ? answerText(found) : null;
  const answers = text ? [text] : [];

  if (!succeeded && answers.length === 0 && infoboxes.length === 0 && failures.length > 0) {
    const failed = failures.find((f) => f.status === 502);
    if (failed) return { status: 502, detail: failed.body.detail, unresponsive };
    const refused = failures.find((f) => f.status === 400);
    if (refused) return { status: 400, detail: describeRefusal(refused.body), unresponsive };
    const first = failures[0]!;
    return {
      status: 503,
      detail: failures.map((f) => (f.status === 503 ? f.body.detail : '')).join(' '),
      unresponsive,
      ...('headers' in first && first.headers ? { headers: first.headers } : {}),
    };
  }
  return {
    status: 200,
    body: {
      query: q,
      number_of_results: results.length,
      results,
      answers,
      corrections,
      infoboxes,
      suggestions,
      unresponsive_engines: unresponsiveEngines(unresponsive),
    },
  };
}
