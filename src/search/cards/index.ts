import type { StackExchangeCard, TripadvisorCard, TvdbCard, WikipediaCard } from '../../contracts/cards.js';
import type { Place, PlaceFacts } from '../../contracts/place.js';
import { nominatimSearchCall } from '../../providers/nominatim/search.js';
import type { Gathered, ProviderTask, Unresponsive } from '../../providers/types.js';
import { allFailed, type SearchOutcome } from '../outcome.js';
import { buildPlace } from '../place.js';
import type { CardsParams } from '../queries.js';
import { enginesToAsk, type SearchDeps, searchWeb } from '../web.js';
import {
  explicitTitle,
  isProgrammingQuery,
  looksLikePlace,
  MAX_SIGNAL_URLS,
  type Signals,
  stackExchangeTrigger,
  tripadvisorTrigger,
  tvdbTrigger,
} from './signals.js';
import { siteOf, stackExchangeFlow } from './stackexchange.js';
import { thetvdbFlow } from './thetvdb.js';
import { tripadvisorFlow } from './tripadvisor.js';
import { type Classification, classificationFlow } from './wikidata.js';
import { wikipediaFlow } from './wikipedia.js';

/*
 * GET /api/v1/cards/?q= (docs/api.md):
 * `{query, wikipedia, thetvdb, tripadvisor, stackexchange, map}`, each a card
 * or null; always 200 (a card that cannot be had is simply null).
 *
 * 1. At once: the Wikipedia lookup (then Wikidata's classification of its
 *    subject) and a page-1 web search with the requested engines (no date),
 *    whose result URLs are signals (film, travel, programming or map sites;
 *    which Stack Exchange site). Its slices are the web endpoint's, cached.
 *    As soon as the results are in, Stack Exchange if the query is about code.
 * 2. With all the signals (signals.ts), at once: TheTVDB if the query is a
 *    film or a show (or a plausible title nothing else claims), Tripadvisor
 *    if it is somewhere to eat, sleep or visit. Stack Exchange's card counts
 *    only when the subject is not a person, a place or a film.
 * 3. Selection: TheTVDB's card first; Tripadvisor's only without one; Stack
 *    Exchange's only without either (an unused lookup is not waited for).
 * 4. The map quick answer (Nominatim, limit 1) only when none of those three
 *    gave a card and the query looks like a place.
 * 5. Safe search (on by default) hides a Wikipedia card whose title names an
 *    explicit subject or whose subject Wikidata classes as adult.
 *
 * Every lookup is bounded by its provider's timeout (one deadline over its
 * steps) and cached for an hour by the runner, "no card" included; a slow or
 * failing provider only loses its own card. Health is recorded per call.
 *
 * `unresponsive` lists the providers this request waited on that failed or
 * timed out (the web engines of step 1 included), as the other search
 * endpoints do; their cards are null. When every provider waited on failed
 * and no map answer came, the answer is the other endpoints' 502.
 */

export interface MapAnswer {
  type: 'map';
  place: Place;
  query: string;
}

export interface CardsResponse {
  query: string;
  wikipedia: WikipediaCard | null;
  thetvdb: TvdbCard | null;
  tripadvisor: TripadvisorCard | null;
  stackexchange: StackExchangeCard | null;
  map: MapAnswer | null;
  /** Providers waited on for this request that failed or timed out (as the other search endpoints). */
  unresponsive: Unresponsive[];
}

/** What the lookups this request waited on came to: whether any provider answered, and which failed. */
class Waited {
  answered = false;
  private readonly failed = new Map<string, Unresponsive>();

  /** A lookup's outcome, once the request uses it. */
  take<T>(looked: Looked<T>): T | null {
    if (looked.outcome) this.add(looked.outcome);
    return looked.value;
  }

  add(outcome: Gathered<unknown>): void {
    if (outcome.ok) this.answered = true;
    // A refusal of the caller's own value is an answer ("nothing for that"), not a failure.
    else if (outcome.error.callerRefused) this.answered = true;
    else if (!this.failed.has(outcome.provider)) {
      this.failed.set(outcome.provider, outcome.error.unresponsive());
    }
  }

  addUnresponsive(list: readonly Unresponsive[]): void {
    for (const u of list) if (!this.failed.has(u.engine)) this.failed.set(u.engine, u);
  }

  /** In slug order, whatever order the lookups finished in. */
  unresponsive(): Unresponsive[] {
    return [...this.failed.values()].sort((a, b) => (a.engine < b.engine ? -1 : a.engine > b.engine ? 1 : 0));
  }

  /** Something was asked, and nothing answered. */
  allFailed(): boolean {
    return !this.answered && this.failed.size > 0;
  }
}

/** A lookup's value (null: no card, not configured, or failed) and the outcome of its provider, when one was asked. */
interface Looked<T> {
  value: T | null;
  outcome: Gathered<unknown> | null;
}

const NOT_ASKED: Looked<never> = { value: null, outcome: null };

/** A lookup's value (null when its provider is not configured, failed or timed out) and its outcome. */
async function lookup<T>(deps: SearchDeps, task: ProviderTask<T | null> | null): Promise<Looked<T>> {
  if (task === null || !deps.providers.isConfigured(task.provider)) return NOT_ASKED;
  const [outcome] = await deps.upstream.gather([task], { deadlineMs: deps.providers.timeoutMs(task.provider) });
  if (!outcome) return NOT_ASKED;
  return { value: outcome.ok ? outcome.value : null, outcome };
}

/** URLs of the page-1 web results for the query (none when no engine in scope answers); engines' failures go to `waited`. */
async function webSignals(deps: SearchDeps, params: CardsParams, waited: Waited): Promise<string[]> {
  const query = {
    q: params.q,
    engine: params.engine,
    safe: params.safe,
    lang: params.lang,
    page: 1,
    date: '',
  } as const;
  try {
    const outcome = await searchWeb(deps, query);
    if (outcome.status === 502) waited.addUnresponsive(outcome.body.unresponsive);
    if (outcome.status !== 200) return [];
    // An engine asked that is not listed as failing answered (a 200 may also mean none was asked).
    if (enginesToAsk(params.engine, query, deps.providers).length > outcome.body.unresponsive.length) {
      waited.answered = true;
    }
    waited.addUnresponsive(outcome.body.unresponsive);
    return outcome.body.results.slice(0, MAX_SIGNAL_URLS).map((r) => r.url);
  } catch {
    return [];
  }
}

async function mapAnswer(deps: SearchDeps, q: string, lang: string, waited: Waited): Promise<MapAnswer | null> {
  const places = waited.take(await lookup<PlaceFacts[]>(deps, nominatimSearchCall({ q, limit: 1, lang }, deps.config)));
  const facts = places?.[0];
  return facts ? { type: 'map', place: buildPlace(facts), query: q } : null;
}

export async function searchCards(deps: SearchDeps, params: CardsParams): Promise<SearchOutcome<CardsResponse>> {
  const { q, lang } = params;
  const config = deps.config;
  const waited = new Waited();

  const urls = webSignals(deps, params, waited);
  // Stack Exchange needs only the query and the results: it does not wait for Wikipedia and Wikidata.
  const stackexchange = urls.then((u) =>
    isProgrammingQuery(q, u) ? lookup(deps, stackExchangeFlow(q, lang, siteOf(u), config)) : NOT_ASKED,
  );
  const wikipedia = lookup(deps, wikipediaFlow(q, lang, config));
  const subject = wikipedia.then((looked) =>
    looked.value?.wikibase_item
      ? lookup<Classification>(deps, classificationFlow(looked.value.wikibase_item, config))
      : NOT_ASKED,
  );
  const [webUrls, wikiLooked, subjectLooked] = await Promise.all([urls, wikipedia, subject]);
  const wikiCard = waited.take(wikiLooked);
  const classification = waited.take(subjectLooked);
  // Safe search hides an explicit subject's card, and it then says nothing about the query either.
  const hidden = wikiCard !== null && params.safe && (explicitTitle(wikiCard.title) || classification?.adult === true);
  const signals: Signals = hidden
    ? { q, urls: webUrls, wikipedia: null, subject: null }
    : { q, urls: webUrls, wikipedia: wikiCard, subject: classification };
  const wikiTitle = signals.wikipedia?.title ?? '';

  const tvdb = tvdbTrigger(signals);
  const thetvdb = tvdb ? lookup(deps, thetvdbFlow(q, lang, wikiTitle, tvdb.probe, config)) : Promise.resolve(NOT_ASKED);
  const tripadvisor = tripadvisorTrigger(signals)
    ? lookup(deps, tripadvisorFlow(q, lang, wikiTitle, config))
    : Promise.resolve(NOT_ASKED);

  const body: CardsResponse = {
    query: q,
    wikipedia: signals.wikipedia,
    thetvdb: waited.take(await thetvdb),
    tripadvisor: null,
    stackexchange: null,
    map: null,
    unresponsive: [],
  };
  if (!body.thetvdb) body.tripadvisor = waited.take(await tripadvisor);
  if (!body.thetvdb && !body.tripadvisor && stackExchangeTrigger(signals)) {
    body.stackexchange = waited.take(await stackexchange);
  }
  if (!body.thetvdb && !body.tripadvisor && !body.stackexchange && looksLikePlace(signals)) {
    body.map = await mapAnswer(deps, q, lang, waited);
  }
  body.unresponsive = waited.unresponsive();
  if (body.map === null && waited.allFailed()) return allFailed(body.unresponsive);
  return { status: 200, body };
}
