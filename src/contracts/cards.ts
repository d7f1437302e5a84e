/*
 * The knowledge cards of GET /api/v1/cards/ (docs/api.md): what the card adapters' parsers hand back and what
 * the cards feature answers. Neutral ground: src/providers/ and src/search/
 * both import it, it imports neither.
 */

/** provider_08: the summary of the Wikipedia article the query names. */
export interface WikipediaCard {
  title: string;
  description: string;
  extract: string;
  /** The article's desktop URL. */
  url: string;
  /** An image URL, or "". */
  thumbnail: string;
  /** The Wikidata item id (Q…), or "". */
  wikibase_item: string;
}

export interface TvdbCastMember {
  name: string;
  character: string;
  /** Portrait URL, or "". */
  profile: string;
}

export interface TvdbCrewMember {
  name: string;
  job: string;
  profile: string;
}

/** provider_10: a film or a series. */
export interface TvdbCard {
  title: string;
  year: string;
  media_type: 'movie' | 'series';
  overview: string;
  poster: string;
  backdrop: string;
  /** At most 3. */
  genres: string[];
  tagline: string;
  status: string;
  /** At most 8, in billing order. */
  cast: TvdbCastMember[];
  /** At most 4 people: creators, showrunners, directors, writers. */
  crew: TvdbCrewMember[];
  /** https://thetvdb.com/{movies|series}/{slug} */
  url: string;
}

export type RatingBubble = 'full' | 'half' | 'empty';

/** provider_11: a restaurant, hotel or attraction. */
export interface TripadvisorCard {
  name: string;
  /** The town or area the place is in. */
  geo: string;
  address: string;
  rating: number | null;
  /** Five bubbles for a rating, none without one. */
  rating_bubbles: RatingBubble[];
  num_reviews: number;
  description: string;
  url: string;
  latitude: number | null;
  longitude: number | null;
}

export interface StackExchangeAnswer {
  /** Sanitised HTML. */
  body: string;
  /** More than 320 visible characters (clients collapse it). */
  is_long: boolean;
  score: number;
  is_accepted: boolean;
  url: string;
}

/** provider_12: the best-matching question and its top answer. */
export interface StackExchangeCard {
  title: string;
  url: string;
  site_name: string;
  score: number;
  answer_count: number;
  view_count: number;
  is_answered: boolean;
  /** At most 5. */
  tags: string[];
  answer: StackExchangeAnswer | null;
}

/** The TheTVDB search hit a card may be built from. */
export interface TvdbHit {
  tvdb_id: string;
  type: string;
  name: string;
  slug: string;
  /** Names in other languages and aliases (relevance only). */
  otherNames: string[];
}

/** A Stack Exchange question as searched (before its answer is fetched). */
export interface StackExchangeQuestion {
  question_id: number;
  title: string;
  link: string;
  score: number;
  answer_count: number;
  view_count: number;
  is_answered: boolean;
  tags: string[];
}

/** A Tripadvisor location as searched (name and address only: the card needs its details). */
export interface TripadvisorHit {
  location_id: string;
  name: string;
  /** Address and town, for matching a place named in the query. */
  place: string;
}
