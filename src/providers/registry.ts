import type { Config } from '../config/index.js';
import { PROVIDER_SLUGS, type ProviderDirectory, type ProviderGroup, type ProviderSlug } from './types.js';

/*
 * The sixteen upstream providers, in display order (DESIGN.md section 2).
 * `configured` says whether this instance can call the provider; a provider
 * named in DISABLED_PROVIDERS is unconfigured everywhere.
 */

/** How a provider's health is established: by real searches, or by an active probe. */
export type MonitorKind = 'query' | 'probe';

export interface ProviderInfo {
  slug: ProviderSlug;
  /** Display name (the `name` field of status records). */
  name: string;
  group: ProviderGroup;
  monitor: MonitorKind;
  /** Has what it needs to be called (its key, or keyless). DISABLED_PROVIDERS is applied separately. */
  hasCredentials(config: Config): boolean;
  /** The variable(s) holding the provider's base URL. */
  baseUrlVariables: readonly (keyof Config)[];
  /** Default timeout of one call (ms) when PROVIDER_TIMEOUT_MS is 0. */
  defaultTimeoutMs: number;
}

const always = () => true;
const has = (name: keyof Config) => (config: Config) => String(config[name] ?? '') !== '';

/** The web engines answer within 3 s or are left out of the merge. */
export const WEB_ENGINE_TIMEOUT_MS = 3000;

export const PROVIDERS: readonly ProviderInfo[] = [
  {
    slug: 'provider_01',
    name: 'Brave Search',
    group: 'engine',
    monitor: 'query',
    hasCredentials: has('BRAVE_API_KEY'),
    baseUrlVariables: ['BRAVE_BASE_URL'],
    defaultTimeoutMs: WEB_ENGINE_TIMEOUT_MS,
  },
  {
    slug: 'provider_02',
    name: 'Mojeek',
    group: 'engine',
    monitor: 'query',
    hasCredentials: has('MOJEEK_API_KEY'),
    baseUrlVariables: ['MOJEEK_BASE_URL'],
    defaultTimeoutMs: WEB_ENGINE_TIMEOUT_MS,
  },
  {
    slug: 'provider_03',
    name: 'Marginalia',
    group: 'engine',
    monitor: 'query',
    hasCredentials: has('MARGINALIA_API_KEY'),
    baseUrlVariables: ['MARGINALIA_BASE_URL'],
    defaultTimeoutMs: WEB_ENGINE_TIMEOUT_MS,
  },
  {
    slug: 'provider_04',
    name: 'Staan',
    group: 'engine',
    monitor: 'query',
    hasCredentials: has('STAAN_API_KEY'),
    baseUrlVariables: ['STAAN_BASE_URL'],
    defaultTimeoutMs: WEB_ENGINE_TIMEOUT_MS,
  },
  {
    slug: 'provider_05',
    name: 'Pixabay',
    group: 'media',
    monitor: 'query',
    hasCredentials: has('PIXABAY_API_KEY'),
    baseUrlVariables: ['PIXABAY_BASE_URL'],
    defaultTimeoutMs: 10_000,
  },
  {
    slug: 'provider_06',
    name: 'Sepia Search (PeerTube)',
    group: 'media',
    monitor: 'query',
    hasCredentials: always,
    baseUrlVariables: ['SEPIA_BASE_URL'],
    defaultTimeoutMs: 10_000,
  },
  {
    slug: 'provider_07',
    name: 'World News API',
    group: 'media',
    monitor: 'query',
    hasCredentials: has('WORLDNEWS_API_KEY'),
    baseUrlVariables: ['WORLDNEWS_BASE_URL'],
    defaultTimeoutMs: 10_000,
  },
  {
    slug: 'provider_08',
    name: 'Wikipedia',
    group: 'cards',
    monitor: 'query',
    hasCredentials: always,
    baseUrlVariables: ['WIKIPEDIA_BASE_URL'],
    defaultTimeoutMs: 5000,
  },
  {
    slug: 'provider_09',
    name: 'Wikidata',
    group: 'cards',
    monitor: 'query',
    hasCredentials: always,
    baseUrlVariables: ['WIKIDATA_BASE_URL'],
    defaultTimeoutMs: 5000,
  },
  {
    slug: 'provider_10',
    name: 'TheTVDB',
    group: 'cards',
    monitor: 'query',
    hasCredentials: has('THETVDB_API_KEY'),
    baseUrlVariables: ['THETVDB_BASE_URL'],
    defaultTimeoutMs: 8000,
  },
  {
    slug: 'provider_11',
    name: 'Tripadvisor',
    group: 'cards',
    monitor: 'query',
    hasCredentials: has('TRIPADVISOR_API_KEY'),
    baseUrlVariables: ['TRIPADVISOR_BASE_URL'],
    defaultTimeoutMs: 8000,
  },
  {
    slug: 'provider_12',
    name: 'Stack Exchange',
    group: 'cards',
    monitor: 'query',
    hasCredentials: always,
    baseUrlVariables: ['STACKEXCHANGE_BASE_URL'],
    defaultTimeoutMs: 8000,
  },
  {
    slug: 'weather',
    name: 'Open-Meteo',
    group: 'instant',
    monitor: 'probe',
    hasCredentials: always,
    baseUrlVariables: ['OPENMETEO_BASE_URL', 'OPENMETEO_GEOCODING_URL'],
    defaultTimeoutMs: 8000,
  },
  {
    slug: 'currency',
    name: 'Frankfurter',
    group: 'instant',
    monitor: 'probe',
    hasCredentials: always,
    baseUrlVariables: ['FRANKFURTER_BASE_URL'],
    defaultTimeoutMs: 10_000,
  },
  {
    slug: 'provider_13',
    name: 'OpenStreetMap Nominatim',
    group: 'maps',
    monitor: 'probe',
    hasCredentials: always,
    baseUrlVariables: ['NOMINATIM_BASE_URL'],
    defaultTimeoutMs: 6000,
  },
  {
    slug: 'translate',
    name: 'LibreTranslate',
    group: 'translate',
    monitor: 'probe',
    hasCredentials: has('LIBRETRANSLATE_URL'),
    baseUrlVariables: ['LIBRETRANSLATE_URL'],
    defaultTimeoutMs: 10_000,
  },
];

/** Group keys in display order, with their labels on the status page. */
export const GROUPS: readonly { key: ProviderGroup; label: string }[] = [
  { key: 'engine', label: 'Search engines' },
  { key: 'media', label: 'Media & news' },
  { key: 'cards', label: 'Knowledge panels' },
  { key: 'instant', label: 'Instant answers' },
  { key: 'maps', label: 'Maps' },
  { key: 'translate', label: 'Translation' },
];

const BY_SLUG = new Map<string, ProviderInfo>(PROVIDERS.map((p) => [p.slug, p]));

export function isProviderSlug(value: string): value is ProviderSlug {
  return BY_SLUG.has(value);
}

export function providerInfo(slug: ProviderSlug): ProviderInfo {
  return BY_SLUG.get(slug)!;
}

/** `app.providers` (the registry's view of this instance's configuration). */
export type Providers = ProviderDirectory;

export function createProviderDirectory(config: Config): Providers {
  const disabled = new Set(config.DISABLED_PROVIDERS);
  const configuredSet = new Set<ProviderSlug>(
    PROVIDERS.filter((p) => !disabled.has(p.slug) && p.hasCredentials(config)).map((p) => p.slug),
  );
  const configuredList = PROVIDERS.filter((p) => configuredSet.has(p.slug));
  return {
    isConfigured: (slug) => configuredSet.has(slug),
    isDisabled: (slug) => disabled.has(slug),
    timeoutMs: (slug) => config.PROVIDER_TIMEOUT_MS || (BY_SLUG.get(slug)?.defaultTimeoutMs ?? WEB_ENGINE_TIMEOUT_MS),
    configured: () => [...configuredList],
    get: (slug) => BY_SLUG.get(slug),
  };
}

// The registry and the slug list of types.ts must not drift apart.
if (PROVIDERS.map((p) => p.slug).join() !== PROVIDER_SLUGS.join()) {
  throw new Error('providers/registry.ts and PROVIDER_SLUGS disagree');
}
