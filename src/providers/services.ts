import type pg from 'pg';
import type { Config } from '../config/index.js';
import type { SearchCache } from './cache.js';
import { HealthRecorder, type HealthRecorderOptions } from './health-recorder.js';
import { createHttpClient, type HttpClient } from './http.js';
import { createProviderDirectory } from './registry.js';
import { createRunner, type ProviderRunner, type RunnerDeps, type RunnerLog } from './runner.js';
import { ProviderSuspensions, type SuspensionLog } from './suspension.js';
import type { ProviderDirectory } from './types.js';

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
  /** Flushes health and closes the HTTP pools. */
  close(): Promise<void>;
}

export interface ProviderServicesOptions {
  log?: RunnerLog & HealthRecorderOptions['log'] & SuspensionLog;
  cache?: SearchCache;
  /** With alert webhooks, `onTransitions` queues the state changes status writes make (alerts/transitions.ts). */
  recorder?: Omit<HealthRecorderOptions, 'log'>;
  /** Told of every finished upstream call (metrics). */
  onCall?: RunnerDeps['onCall'];
}

/** Every configured secret that could reach an upstream request (scrubbed from error text and cache keys). */
export function configSecrets(config: Config): string[] {
  return (Object.keys(config) as (keyof Config)[])
    .filter((k) => /(_API_KEY|_PIN|_TOKEN)$/.test(k))
    .map((k) => String(config[k] ?? ''))
    .filter(Boolean);
}

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
  const runner = createRunner({
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
    async close() {
      await recorder.close();
      await http.close();
    },
  };
}
