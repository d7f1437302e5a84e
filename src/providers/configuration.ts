import type { Config } from '../config/index.js';
import { GROUPS, PROVIDERS, whyNotConfigured } from './registry.js';
import type { ProviderDescriptor, ProviderGroup, ProviderSlug } from './types.js';

/*
 * What this instance has configured, and why not where it has not: logged
 * once per provider group at start-up and printed by `sift providers`, so
 * that a fresh instance says what it lacks instead of answering empty.
 */

export interface ProviderConfigurationRow {
  slug: ProviderSlug;
  name: string;
  group: ProviderGroup;
  configured: boolean;
  /** Why not configured: `no key (BRAVE_API_KEY)`, `disabled (DISABLED_PROVIDERS)`; "" when configured. */
  reason: string;
  /** Host of the provider's base URL (a `{lang}` template kept as is). */
  base_url_host: string;
}

function hostOf(url: string): string {
  return /^[a-z]+:\/\/([^/?#]+)/i.exec(url)?.[1] ?? '';
}

function rowOf(p: ProviderDescriptor, config: Config): ProviderConfigurationRow {
  const why = whyNotConfigured(p, config);
  const variable = p.baseUrlVariables[0];
  return {
    slug: p.slug,
    name: p.name,
    group: p.group,
    configured: why === null,
    reason:
      why === null
        ? ''
        : why.kind === 'disabled'
          ? 'disabled (DISABLED_PROVIDERS)'
          : `no ${why.variables.some((v) => v.endsWith('_URL')) ? 'URL' : 'key'} (${why.variables.join(', ')})`,
    base_url_host: variable ? hostOf(String(config[variable] ?? '')) : '',
  };
}

/** Every provider, in registry order, with whether it is configured on this instance and why not. */
export function providerConfiguration(config: Config): ProviderConfigurationRow[] {
  return PROVIDERS.map((p) => rowOf(p, config));
}

/**
 * One line per provider group:
 * `engine: configured provider_03 (Marginalia); not configured provider_01 (Brave Search): no key (BRAVE_API_KEY)`.
 */
export function configurationSummary(
  rows: readonly ProviderConfigurationRow[],
): { group: ProviderGroup; line: string }[] {
  return GROUPS.map(({ key }) => {
    const inGroup = rows.filter((r) => r.group === key);
    const on = inGroup.filter((r) => r.configured).map((r) => `${r.slug} (${r.name})`);
    const off = inGroup.filter((r) => !r.configured).map((r) => `${r.slug} (${r.name}): ${r.reason}`);
    const parts = [`configured ${on.length > 0 ? on.join(', ') : 'none'}`];
    if (off.length > 0) parts.push(`not configured ${off.join(', ')}`);
    return { group: key, line: `${key}: ${parts.join('; ')}` };
  });
}
