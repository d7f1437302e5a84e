import type { Config } from '../config/index.js';
import { brave } from './brave/index.js';
import { frankfurter } from './frankfurter/index.js';
import { libreTranslate } from './libretranslate/index.js';
import { marginalia } from './marginalia/index.js';
import { mojeek } from './mojeek/index.js';
import { nominatim } from './nominatim/index.js';
import { openMeteo } from './openmeteo/index.js';
import { pixabay } from './pixabay/index.js';
import { sepia } from './sepia/index.js';
import { stackexchange } from './stackexchange/index.js';
import { staan } from './staan/index.js';
import { thetvdb } from './thetvdb/index.js';
import { tripadvisor } from './tripadvisor/index.js';
import type {
  NotConfiguredReason,
  ProviderDescriptor,
  ProviderDirectory,
  ProviderFeature,
  ProviderGroup,
  ProviderSlug,
} from './types.js';
import { wikidata } from './wikidata/index.js';
import { wikipedia } from './wikipedia/index.js';
import { worldnews } from './worldnews/index.js';

/*
 * The sixteen upstream providers, in display order (the spec's slugs, each bound to one real upstream).
 * Each is declared once, by the descriptor in its own folder; everything
 * else (slug lists, names, the providers of a feature, timeouts, TTLs,
 * probes) is read from these descriptors.
 */

export const PROVIDERS = [
  brave,
  mojeek,
  marginalia,
  staan,
  pixabay,
  sepia,
  worldnews,
  wikipedia,
  wikidata,
  thetvdb,
  tripadvisor,
  stackexchange,
  openMeteo,
  frankfurter,
  nominatim,
  libreTranslate,
] as const satisfies readonly ProviderDescriptor[];

// Every slug of the spec has a descriptor (checked by the compiler, not at run time).
type Declared = (typeof PROVIDERS)[number]['slug'];
const everySlugDeclared: [Exclude<ProviderSlug, Declared>] extends [never] ? true : never = true;
void everySlugDeclared;

export const PROVIDER_SLUGS: readonly ProviderSlug[] = PROVIDERS.map((p) => p.slug);

/** Group keys in display order, with their labels on the status page. */
export const GROUPS: readonly { key: ProviderGroup; label: string }[] = [
  { key: 'engine', label: 'Search engines' },
  { key: 'media', label: 'Media & news' },
  { key: 'cards', label: 'Knowledge panels' },
  { key: 'instant', label: 'Instant answers' },
  { key: 'maps', label: 'Maps' },
  { key: 'translate', label: 'Translation' },
];

const BY_SLUG = new Map<string, ProviderDescriptor>(PROVIDERS.map((p) => [p.slug, p]));

/** The descriptor of a slug. */
export function descriptorOf(slug: ProviderSlug): ProviderDescriptor {
  return BY_SLUG.get(slug)!;
}

/** Providers offering a feature's call, in registry order (whether configured or not). */
export function providersOffering<F extends ProviderFeature>(
  feature: F,
): (ProviderDescriptor & { calls: Required<Pick<NonNullable<ProviderDescriptor['calls']>, F>> })[] {
  return PROVIDERS.filter((p: ProviderDescriptor) => p.calls?.[feature] !== undefined) as never;
}

/** Why `descriptor` is not configured under `config`, or null when it is. */
export function whyNotConfigured(descriptor: ProviderDescriptor, config: Config): NotConfiguredReason | null {
  if (config.DISABLED_PROVIDERS.includes(descriptor.slug)) return { kind: 'disabled' };
  const missing = descriptor.requires.filter((v) => String(config[v] ?? '') === '');
  return missing.length > 0 ? { kind: 'missing', variables: missing } : null;
}

/** "provider_02 (Mojeek) needs MOJEEK_API_KEY", "provider_06 (Sepia…) is disabled by DISABLED_PROVIDERS". */
export function describeNotConfigured(descriptor: ProviderDescriptor, reason: NotConfiguredReason): string {
  const who = `${descriptor.slug} (${descriptor.name})`;
  return reason.kind === 'disabled'
    ? `${who} is disabled by DISABLED_PROVIDERS`
    : `${who} needs ${reason.variables.join(' and ')}`;
}

export function createProviderDirectory(config: Config): ProviderDirectory {
  const reasons = new Map<ProviderSlug, NotConfiguredReason | null>(
    PROVIDERS.map((p) => [p.slug, whyNotConfigured(p, config)]),
  );
  // DEMO_MODE (npm run demo, every upstream a local fake): "Brave Search (demo)" on the status API and page.
  const configuredList: ProviderDescriptor[] = PROVIDERS.filter((p) => reasons.get(p.slug) === null).map((p) =>
    config.DEMO_MODE ? { ...p, name: `${p.name} (demo)` } : p,
  );
  const configuredSet = new Set<ProviderSlug>(configuredList.map((p) => p.slug));
  const disabled = new Set(config.DISABLED_PROVIDERS);
  return {
    isConfigured: (slug) => configuredSet.has(slug),
    isDisabled: (slug) => disabled.has(slug),
    whyNotConfigured: (slug) => reasons.get(slug) ?? null,
    timeoutMs: (slug) => config.PROVIDER_TIMEOUT_MS || descriptorOf(slug).timeoutMs,
    cacheTtlMs: (slug) => descriptorOf(slug).cacheTtlMs,
    configured: () => [...configuredList],
    get: (slug) => BY_SLUG.get(slug),
  };
}
