import type { WikipediaCard } from '../../contracts/cards.js';
import type { TripadvisorCategory } from '../../providers/tripadvisor/locations.js';
import { isRelevant, identifyingTokens } from './relevance.js';
import { MAP_SITES, PROGRAMMING_SITES, SCREEN_SITES, TRAVEL_SITES } from './sites.js';
import { fold, keywordSet, words } from './text.js';
import {
  EAT_WORDS,
  EXPLICIT_TITLE_WORDS,
  NOT_A_TITLE,
  PERSON_WORDS,
  PLACE_PHRASES,
  PLACE_WORDS,
  PROGRAMMING_WORDS,
  SCREEN_WORDS,
  STAY_WORDS,
  STREET_WORDS,
  VENUE_WORDS,
  VISIT_WORDS,
} from './vocabulary.js';
import type { Classification, SubjectTag } from './wikidata.js';

/*
 * Which cards a query may get (no I/O): what the query says, what the
 * Wikipedia card's short description says, what Wikidata classed its subject
 * as, and which sites the page-1 web results come from. Wikidata's classes
 * win over the description, which wins over the result sites.
 */

export interface Signals {
  q: string;
  wikipedia: WikipediaCard | null;
  /** null when there is no Wikidata item or its lookup failed. */
  subject: Classification | null;
  /** URLs of the first web results (at most 8). */
  urls: readonly string[];
}

const SCREEN = keywordSet(SCREEN_WORDS);
const PERSON = keywordSet(PERSON_WORDS);
const PLACE = keywordSet(PLACE_WORDS);
const VENUE = keywordSet(VENUE_WORDS);
const PLACE_OR_VENUE = keywordSet([...PLACE_WORDS, ...VENUE_WORDS]);
const EAT = keywordSet(EAT_WORDS);
const STAY = keywordSet(STAY_WORDS);
const VISIT = keywordSet(VISIT_WORDS);
const TRAVEL_QUERY = keywordSet([...EAT_WORDS, ...STAY_WORDS, ...VISIT_WORDS]);
const PLACE_PHRASE = keywordSet(PLACE_PHRASES);
const PROGRAMMING = keywordSet(PROGRAMMING_WORDS);
const EXPLICIT = keywordSet(EXPLICIT_TITLE_WORDS);
const STREETS: ReadonlySet<string> = new Set(STREET_WORDS.map(fold));
const NOT_TITLE: ReadonlySet<string> = new Set(NOT_A_TITLE.map(fold));

/** Titles with 2 to 6 identifying words can be film or series titles worth a TheTVDB search. */
const TITLE_MIN_TOKENS = 2;
const TITLE_MAX_TOKENS = 6;
export const MAX_SIGNAL_URLS = 8;

function tagged(s: Signals, ...tags: SubjectTag[]): boolean {
  return s.subject !== null && tags.some((t) => s.subject!.tags.includes(t));
}

const hasTags = (s: Signals) => s.subject !== null && s.subject.tags.length > 0;

function description(s: Signals): string {
  return s.wikipedia?.description ?? '';
}

/** Whether a URL is on one of the sites (a host, a subdomain of it, or a "host/path" prefix). */
export function onSite(url: string, sites: readonly string[]): boolean {
  let host: string;
  let path: string;
  try {
    const u = new URL(url);
    host = u.hostname.toLowerCase().replace(/^www\./, '');
    path = u.pathname;
  } catch {
    return false;
  }
  return sites.some((site) => {
    const slash = site.indexOf('/');
    if (slash < 0) return host === site || host.endsWith(`.${site}`);
    const siteHost = site.slice(0, slash);
    return (host === siteHost || host.endsWith(`.${siteHost}`)) && path.startsWith(site.slice(slash));
  });
}

function resultsOn(s: Signals, sites: readonly string[]): boolean {
  return s.urls.slice(0, MAX_SIGNAL_URLS).some((u) => onSite(u, sites));
}

/** Film/show and person words in the description: which comes first decides ("2018 film about a singer"). */
function describedAs(s: Signals): 'screen' | 'person' | null {
  const d = description(s);
  const screenAt = SCREEN.firstAt(d);
  const personAt = PERSON.firstAt(d);
  if (screenAt >= 0 && (personAt < 0 || screenAt < personAt)) return 'screen';
  if (personAt >= 0) return 'person';
  return null;
}

/** The subject is a film or a TV show. */
export function isScreenWork(s: Signals): boolean {
  if (tagged(s, 'movie_tv')) return true;
  if (tagged(s, 'person', 'place')) return false;
  const described = describedAs(s);
  if (described !== null) return described === 'screen';
  return resultsOn(s, SCREEN_SITES);
}

/** The subject is a person. */
export function isPerson(s: Signals): boolean {
  if (tagged(s, 'person')) return true;
  if (tagged(s, 'movie_tv')) return false;
  return describedAs(s) === 'person';
}

/** The subject is a place (a town, a landmark, a restaurant…). */
export function isPlace(s: Signals): boolean {
  if (tagged(s, 'place', 'travel_place')) return true;
  if (tagged(s, 'movie_tv', 'person')) return false;
  return PLACE_OR_VENUE.in(description(s));
}

/** The query itself asks for somewhere to eat, sleep or visit (beyond a name that contains such a word). */
function asksForTravel(s: Signals): boolean {
  if (!TRAVEL_QUERY.in(s.q)) return false;
  const title = s.wikipedia?.title ?? '';
  return !(title && TRAVEL_QUERY.in(title));
}

/** Somewhere to eat, sleep or visit: Tripadvisor's territory. */
export function isTravelQuery(s: Signals): boolean {
  if (tagged(s, 'travel_place')) return true;
  if (asksForTravel(s)) return true;
  if (tagged(s, 'person', 'movie_tv')) return false;
  if (TRAVEL_QUERY.in(s.q)) return true;
  if (tagged(s, 'place')) return false;
  if (VENUE.in(description(s))) return true;
  return resultsOn(s, TRAVEL_SITES);
}

/** The query could be the title of a film or series (a short name, not a question or a how-to). */
export function looksLikeTitle(s: Signals): boolean {
  const tokens = identifyingTokens(s.q);
  if (tokens.size < TITLE_MIN_TOKENS || tokens.size > TITLE_MAX_TOKENS) return false;
  if (words(s.q).some((w) => NOT_TITLE.has(w))) return false;
  const title = s.wikipedia?.title ?? '';
  return title ? isRelevant(title, s.q) : true;
}

/** TheTVDB is asked: a film or show (`probe` false), or a plausible title nothing else claims (`probe` true). */
export function tvdbTrigger(s: Signals): { probe: boolean } | null {
  if (isTravelQuery(s)) return null;
  if (isScreenWork(s)) return { probe: false };
  if (!isPerson(s) && !isPlace(s) && looksLikeTitle(s)) return { probe: true };
  return null;
}

/** Tripadvisor is asked. */
export function tripadvisorTrigger(s: Signals): boolean {
  return isTravelQuery(s);
}

/** The Tripadvisor category the query names, or "" when none or several do. */
export function travelCategory(q: string): TripadvisorCategory | '' {
  const named: TripadvisorCategory[] = [];
  if (EAT.in(q)) named.push('restaurants');
  if (STAY.in(q)) named.push('hotels');
  if (VISIT.in(q)) named.push('attractions');
  return named.length === 1 ? named[0]! : '';
}

/** A programming question: its words, or results from programming sites. */
export function isProgrammingQuery(q: string, urls: readonly string[]): boolean {
  return PROGRAMMING.in(q) || urls.slice(0, MAX_SIGNAL_URLS).some((u) => onSite(u, PROGRAMMING_SITES));
}

/**
 * Stack Exchange's card is shown: a programming question whose subject is
 * not known to be a person, a place or a film.
 */
export function stackExchangeTrigger(s: Signals): boolean {
  if (!isProgrammingQuery(s.q, s.urls)) return false;
  if (hasTags(s)) return !tagged(s, 'person', 'place', 'travel_place', 'movie_tv');
  return describedAs(s) === null;
}

/** An address: a street word and a token with a digit ("10 downing street"). */
function looksLikeAddress(q: string): boolean {
  const tokens = fold(q).replace(/,/g, ' ').split(/\s+/).filter(Boolean);
  return tokens.some((t) => /\p{N}/u.test(t)) && tokens.some((t) => STREETS.has(t.replace(/\.+$/, '')));
}

/** The query names a place worth a map. */
export function looksLikePlace(s: Signals): boolean {
  if (PLACE_PHRASE.in(s.q) || looksLikeAddress(s.q)) return true;
  if (tagged(s, 'place', 'travel_place')) return true;
  if (tagged(s, 'person', 'movie_tv')) return false;
  if (PLACE.in(description(s))) return true;
  if (resultsOn(s, MAP_SITES)) return true;
  return isTravelQuery(s);
}

/** The Wikipedia card's title names an explicit sexual subject. */
export function explicitTitle(title: string): boolean {
  return EXPLICIT.in(title);
}
