import type pg from 'pg';
import type { Config } from '../config/index.js';
import type { SearchCache } from './cache.js';
import { HealthRecorder, type HealthRecorderOptions } from './health-recorder.js';
import { createHttpClient, type HttpClient } from './http.js';
import { type BudgetCrossing, createPacer, type Pacer } from './pacing/pacer.js';
import { pacingPlan, type PacingPlan } from './pacing/plan.js';
import { createProviderDirectory, PROVIDER_SLUGS, PROVIDERS } from '../providers/registry.js';
import { createSharedCache, type SharedCache } from './shared-cache.js';
import { createRunner, type ProviderRunner, type RunnerDeps, type RunnerLog } from './runner.js';
import { ProviderSuspensions, type SuspensionLog } from './suspension.js';
import type { LimitsReport, ProviderDirectory, ProviderSlug } from '../providers/types.js';

/*
 * The upstream machinery as one set: what is configured, the HTTP layer, the
 * health recorder and the runner. The server (plugin.ts) and the CLI
 * (check-provider-health) both build it here.
 */

export interface ProviderServices {
  providers: ProviderDirectory;
  http: HttpClient;
  recorder: HealthRecorder;
  runner: ProviderRunner;
  /** Providers searches skip for now (PROVIDER_SUSPEND_*). */
  suspensions: ProviderSuspensions;
  /** Each provider's pacing and budget on this deployment (PROVIDER_LIMITS and the upstreams' terms). */
  plans: ReadonlyMap<ProviderSlug, PacingPlan>;
  pacer: Pacer;
  /** The response cache level every worker and instance shares (none when off). */
  shared?: SharedCache;
  /** Flushes health and closes the HTTP pools. */
  close(): Promise<void>;
}

export interface ProviderServicesOptions {
  log?: RunnerLog & HealthRecorderOptions['log'] & SuspensionLog;
  cache?: SearchCache;
  /** Share answers with every worker and instance (SHARED_CACHE_MAX_MB > 0; needs `cache`). */
  shareCache?: boolean;
  /** With alert webhooks, `onTransitions` queues the state changes status writes make (alerts/transitions.ts). */
  recorder?: Omit<HealthRecorderOptions, 'log'>;
  /** Told of every finished upstream call (metrics). */
  onCall?: RunnerDeps['onCall'];
  /** Told once per deployment when a provider's budget reaches 80 % and 100 % (alerts). */
  onBudgetCrossed?: (crossing: BudgetCrossing) => void;
}

/** The pacing plan of every provider under `config`. */
export function pacingPlans(config: Config, providers: ProviderDirectory): Map<ProviderSlug, PacingPlan> {
  return new Map(PROVIDERS.map((p) => [p.slug, pacingPlan(p, config, providers.timeoutMs(p.slug))]));
}

/**
 * Every configured secret that could reach an upstream request (scrubbed from error text, and never
 * shared in a cached answer). A key the upstream documents as public (Marginalia's `public`) is none.
 */
export function configSecrets(config: Config): string[] {
  const publicValues = new Map<keyof Config, string>();
  for (const p of PROVIDERS) {
    for (const [name, value] of Object.entries(p.publicCredentials ?? {})) {
      if (value !== undefined) publicValues.set(name as keyof Config, value);
    }
  }
  return (Object.keys(config) as (keyof Config)[])
    .filter((k) => /(_API_KEY|_PIN|_TOKEN)$/.test(k))
    .filter((k) => publicValues.get(k) !== config[k])
    .map((k) => String(config[k] ?? ''))
    .filter(Boolean);
}

const KNOWN_SLUGS: ReadonlySet<string> = new Set(PROVIDER_SLUGS);

export function createProviderServices(
  config: Config,
  pool: pg.Pool,
  options: ProviderServicesOptions = {},
): ProviderServices {
  const providers = createProviderDirectory(config);
  const secrets = configSecrets(config);
  const http = createHttpClient({ userAgent: config.SIFT_USER_AGENT, secrets });
  const recorder = new HealthRecorder(pool, { ...options.recorder, log: options.log });
  const suspensions = new ProviderSuspensions(
    {
      afterFailures: config.PROVIDER_SUSPEND_AFTER_FAILURES,
      firstMs: config.PROVIDER_SUSPEND_FIRST_SECONDS * 1000,
      maxMs: Math.max(config.PROVIDER_SUSPEND_FIRST_SECONDS, config.PROVIDER_SUSPEND_MAX_SECONDS) * 1000,
    },
    options.log,
  );
  const plans = pacingPlans(config, providers);
  const reports = new Map<ProviderSlug, LimitsReport>();
  for (const p of PROVIDERS) if (p.limitsReport) reports.set(p.slug, p.limitsReport);
  const pacer = createPacer(pool, {
    plans,
    reports,
    log: options.log,
    onBudgetCrossed: (crossing) => {
      options.log?.warn(
        crossing,
        `${crossing.provider} has used ${crossing.percent} % of its ${crossing.period}ly budget`,
      );
      options.onBudgetCrossed?.(crossing);
    },
  });
  const shared =
    options.shareCache && options.cache && config.SHARED_CACHE_MAX_MB > 0
      ? createSharedCache(pool, {
          maxBytes: config.SHARED_CACHE_MAX_MB * 1024 * 1024,
          secrets,
          // A flight outlives its call (the pacing wait and the timeout) before another process takes over.
          // Page contents share the cache under a name of their own, bounded by their own timeout.
          flightMs: (slug) =>
            (KNOWN_SLUGS.has(slug) ? providers.timeoutMs(slug) : config.CONTENTS_TIMEOUT_SECONDS * 1000) * 1.5 + 1000,
          // A call saved is a slot or a unit of the upstream's allowance: always worth a lookup
          // while something limits the provider (a learnable one that says it has room is measured).
          always: (slug) => pacer.limits(slug),
          clustered: config.WORKERS > 1,
          log: options.log,
        })
      : undefined;
  const runner = createRunner({
    pacer,
    shared,
    http,
    recorder,
    providers,
    cache: options.cache,
    log: options.log,
    secrets,
    onCall: options.onCall,
    suspensions,
  });
  return {
    providers,
    http,
    recorder,
    runner,
    suspensions,
    plans,
    pacer,
    shared,
    async close() {
      await Promise.all([pacer.close(), shared?.close().catch(() => {})]);
      await recorder.close();
      await http.close();
    },
  };
}
