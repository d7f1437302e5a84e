import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { WikipediaCard } from '../../contracts/cards.js';
import { rejectMediaWikiError } from '../mediawiki.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { WIKIPEDIA } from './slug.js';

/*
 * Wikipedia (provider_08), on the {lang} wiki (WIKIPEDIA_BASE_URL is a site
 * root template with `{lang}`; default en):
 *
 * 1. Search: GET {site}/w/api.php?action=query&list=search&srsearch=<q>
 *    &srlimit=5&srprop=redirecttitle&format=json
 *    -> query.search[]: title, redirecttitle (the redirect a hit matched through).
 *    Action API errors come as HTTP 200 with {"error": {...}}: a failure.
 * 2. Summary: GET {site}/api/rest_v1/page/summary/<Title_with_underscores>
 *    (redirect pages answer 30x to their target: followed)
 *    -> type (only "standard" makes a card), title, description, extract,
 *    content_urls.desktop.page, originalimage / thumbnail, wikibase_item.
 *
 * Sources: MediaWiki Action API documentation (list=search, error format) and
 * the Wikimedia REST API reference (page/summary); SearXNG's wikipedia engine
 * reads the same summary fields.
 */

export const WIKIPEDIA_SEARCH_LIMIT = 5;
/** Wikipedia's search refuses longer queries (CirrusSearch's limit): they are not sent. */
export const WIKIPEDIA_MAX_QUERY = 300;

/** An original image wider than this is not used (the thumbnail is). */
const MAX_IMAGE_WIDTH = 2000;

const WIKI_LANGUAGE = /^[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,2}$|^simple$/;

/** Wikis whose name is a language and a two-letter part, which is not a region there. */
const TWO_PART_WIKIS: ReadonlySet<string> = new Set(['nds-nl']);

/**
 * The wiki a `lang` parameter names: its code when it can be a Wikipedia subdomain, else `en`. A
 * language-region tag (`pt-br`, `en_GB`) names its language's wiki: no wiki is named by a region.
 */
export function wikiLanguage(lang: string): string {
  const tag = lang.toLowerCase().replace(/_/g, '-');
  const regional = /^([a-z]{2,3})-(?:[a-z]{2}|\d{3})$/.exec(tag);
  if (regional && !TWO_PART_WIKIS.has(tag)) return regional[1]!;
  return WIKI_LANGUAGE.test(tag) ? tag : 'en';
}

/** The site root of one language's wiki. */
export function wikipediaSite(config: Pick<Config, 'WIKIPEDIA_BASE_URL'>, wikiLang: string): string {
  return config.WIKIPEDIA_BASE_URL.split('{lang}').join(wikiLang);
}

export interface WikipediaHit {
  title: string;
  /** The redirect title the hit matched through, or "". */
  redirecttitle: string;
}

const searchSchema = body({
  query: nested({ search: list(z.object({ title: text, redirecttitle: text })) }),
});

export function parseWikipediaSearch(json: unknown): WikipediaHit[] {
  rejectMediaWikiError(json);
  return searchSchema.parse(json).query.search.filter((h) => h.title !== '');
}

export function wikipediaSearchCall(
  q: string,
  wikiLang: string,
  config: Pick<Config, 'WIKIPEDIA_BASE_URL'>,
): ProviderCall<WikipediaHit[]> {
  const params = new URLSearchParams({
    action: 'query',
    list: 'search',
    srsearch: q,
    srlimit: String(WIKIPEDIA_SEARCH_LIMIT),
    srprop: 'redirecttitle',
    format: 'json',
  });
  return {
    provider: WIKIPEDIA,
    request: { url: `${wikipediaSite(config, wikiLang)}/w/api.php?${params}`, followRedirects: true },
    parse: parseWikipediaSearch,
  };
}

const image = nested({ source: text, width: z.unknown().optional() });

const summarySchema = body({
  type: text,
  title: text,
  description: text,
  extract: text,
  content_urls: nested({ desktop: nested({ page: text }) }),
  originalimage: image,
  thumbnail: image,
  wikibase_item: text,
});

/** The card of a summary, or null when the page is not a standard article (disambiguation, no extract…). */
export function parseWikipediaSummary(json: unknown): WikipediaCard | null {
  const s = summarySchema.parse(json);
  if (s.type !== 'standard') return null;
  const width = typeof s.originalimage.width === 'number' ? s.originalimage.width : Number.POSITIVE_INFINITY;
  const thumbnail = s.originalimage.source && width <= MAX_IMAGE_WIDTH ? s.originalimage.source : s.thumbnail.source;
  return {
    title: s.title,
    description: s.description,
    extract: s.extract,
    url: s.content_urls.desktop.page,
    thumbnail,
    wikibase_item: s.wikibase_item,
  };
}

/** The REST path segment of a title: spaces as underscores, everything else percent-encoded (a `/` too). */
export function summaryPathTitle(title: string): string {
  return encodeURIComponent(title.replace(/ /g, '_'));
}

export function wikipediaSummaryCall(
  title: string,
  wikiLang: string,
  config: Pick<Config, 'WIKIPEDIA_BASE_URL'>,
): ProviderCall<WikipediaCard | null> {
  return {
    provider: WIKIPEDIA,
    request: {
      url: `${wikipediaSite(config, wikiLang)}/api/rest_v1/page/summary/${summaryPathTitle(title)}`,
      followRedirects: true,
    },
    parse: parseWikipediaSummary,
  };
}
