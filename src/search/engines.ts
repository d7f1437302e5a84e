import { BRAVE } from '../providers/brave/index.js';
import { MARGINALIA } from '../providers/marginalia/index.js';
import { MOJEEK } from '../providers/mojeek/index.js';
import { NOMINATIM } from '../providers/nominatim/index.js';
import { PIXABAY } from '../providers/pixabay/index.js';
import { SEPIA } from '../providers/sepia/index.js';
import { STAAN } from '../providers/staan/index.js';
import { STACK_EXCHANGE } from '../providers/stackexchange/index.js';
import { THETVDB } from '../providers/thetvdb/index.js';
import { TRIPADVISOR } from '../providers/tripadvisor/index.js';
import type { ProviderSlug } from '../providers/types.js';
import { WIKIDATA } from '../providers/wikidata/index.js';
import { WIKIPEDIA } from '../providers/wikipedia/index.js';
import { WORLD_NEWS } from '../providers/worldnews/index.js';

/*
 * Sift's providers under the engine names SearXNG gives them (its settings.yml), which clients
 * use for them (the SearXNG-compatible API, MCP's `engines` alias), and SearXNG's
 * categories as Sift's searches: general -> web, images, news, videos, map -> maps. A category
 * SearXNG has and Sift does not (music, it, science...) is ignored, as SearXNG ignores an unknown
 * one; so is an engine name Sift does not have.
 */

export type Category = 'general' | 'images' | 'news' | 'videos' | 'map';

/** In the order /config lists them and results are blended. */
export const CATEGORIES: readonly Category[] = ['general', 'images', 'news', 'videos', 'map'];

export interface Engine {
  /** The engine's SearXNG name. */
  name: string;
  slug: ProviderSlug;
  /** The categories it searches in ('general' for the card providers: they answer as infoboxes). */
  categories: readonly Category[];
  shortcut: string;
  paging: boolean;
  safesearch: boolean;
  timeRange: boolean;
  languages: boolean;
}

export const ENGINES: readonly Engine[] = [
  {
    name: 'brave',
    slug: BRAVE,
    categories: ['general', 'images', 'news', 'videos'],
    shortcut: 'br',
    paging: true,
    safesearch: true,
    timeRange: true,
    languages: true,
  },
  {
    name: 'mojeek',
    slug: MOJEEK,
    categories: ['general'],
    shortcut: 'mjk',
    paging: true,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
  {
    name: 'marginalia',
    slug: MARGINALIA,
    categories: ['general'],
    shortcut: 'mar',
    paging: true,
    safesearch: true,
    timeRange: false,
    languages: false,
  },
  {
    name: 'staan',
    slug: STAAN,
    categories: ['general'],
    shortcut: 'sta',
    paging: true,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
  {
    name: 'pixabay',
    slug: PIXABAY,
    categories: ['images'],
    shortcut: 'pixi',
    paging: true,
    safesearch: true,
    timeRange: false,
    languages: true,
  },
  {
    name: 'sepia',
    slug: SEPIA,
    categories: ['videos'],
    shortcut: 'sep',
    paging: true,
    safesearch: true,
    timeRange: true,
    languages: true,
  },
  {
    name: 'worldnews',
    slug: WORLD_NEWS,
    categories: ['news'],
    shortcut: 'wn',
    paging: true,
    safesearch: false,
    timeRange: true,
    languages: true,
  },
  {
    name: 'wikipedia',
    slug: WIKIPEDIA,
    categories: ['general'],
    shortcut: 'wp',
    paging: false,
    safesearch: true,
    timeRange: false,
    languages: true,
  },
  {
    name: 'wikidata',
    slug: WIKIDATA,
    categories: ['general'],
    shortcut: 'wd',
    paging: false,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
  {
    name: 'thetvdb',
    slug: THETVDB,
    categories: ['general'],
    shortcut: 'tvdb',
    paging: false,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
  {
    name: 'tripadvisor',
    slug: TRIPADVISOR,
    categories: ['general'],
    shortcut: 'ta',
    paging: false,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
  {
    name: 'stackexchange',
    slug: STACK_EXCHANGE,
    categories: ['general'],
    shortcut: 'st',
    paging: false,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
  {
    name: 'openstreetmap',
    slug: NOMINATIM,
    categories: ['map'],
    shortcut: 'osm',
    paging: false,
    safesearch: false,
    timeRange: false,
    languages: true,
  },
];

const BY_SLUG = new Map<string, Engine>(ENGINES.map((e) => [e.slug, e]));

/** SearXNG's other names for the same engines (its per-category Brave engines, its Sepia engine). */
const ALIASES: Readonly<Record<string, { name: string; category?: Category }>> = {
  'brave.images': { name: 'brave', category: 'images' },
  'brave.news': { name: 'brave', category: 'news' },
  'brave.videos': { name: 'brave', category: 'videos' },
  sepiasearch: { name: 'sepia' },
  peertube: { name: 'sepia' },
  'stack exchange': { name: 'stackexchange' },
  stackoverflow: { name: 'stackexchange' },
  osm: { name: 'openstreetmap' },
  nominatim: { name: 'openstreetmap' },
};

const BY_NAME = new Map<string, { engine: Engine; category?: Category }>();
for (const engine of ENGINES) {
  BY_NAME.set(engine.name, { engine });
  BY_NAME.set(engine.slug, { engine });
}
for (const [alias, { name, category }] of Object.entries(ALIASES)) {
  BY_NAME.set(alias, { engine: BY_NAME.get(name)!.engine, ...(category ? { category } : {}) });
}

/** The engine a SearXNG engine name (or a Sift slug) names, with the category an alias implies. */
export function engineNamed(name: string): { engine: Engine; category?: Category } | undefined {
  return BY_NAME.get(name.trim().toLowerCase());
}

const BY_SHORTCUT = new Map<string, Engine>(ENGINES.map((e) => [e.shortcut, e]));

/** The SearXNG engine name a bang names (`!brave`, `!br`, `!brave.news`), or undefined. */
export function engineByBang(name: string): string | undefined {
  const key = name.trim().toLowerCase();
  if (BY_NAME.has(key)) return key;
  return BY_SHORTCUT.get(key)?.name;
}

/** The SearXNG name of a provider (its slug when it has none). */
export function engineName(slug: string): string {
  return BY_SLUG.get(slug)?.name ?? slug;
}

const CATEGORY_SET: ReadonlySet<string> = new Set(CATEGORIES);

export function isCategory(name: string): name is Category {
  return CATEGORY_SET.has(name);
}
