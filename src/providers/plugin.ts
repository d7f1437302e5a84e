import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import { HealthRecorder } from './health-recorder.js';
import { type StatusReader, createStatusReader } from './health-store.js';
import { type HttpClient, createHttpClient } from './http.js';
import { type ProbeScheduler, runProbes, startProbeScheduler } from './probes.js';
import { type Providers, createProviderDirectory } from './registry.js';
import { type ProviderRunner, createRunner } from './runner.js';

/*
 * Decorates the app with the upstream machinery: app.providers (what is
 * configured), app.upstream (the runner every search uses) and app.health
 * (the recorder and the status reader). Registers the recorder's flush with
 * the lifecycle, and starts the probe schedule once the server listens.
 */

export const PROBE_FIRST_RUN_MS = 10_000;

export interface HealthServices {
  recorder: HealthRecorder;
  reader: StatusReader;
  runner: ProviderRunner;
  http: HttpClient;
  /** Runs the probes once now (under the probe lock); false when another instance holds it. */
  probeNow(): Promise<boolean>;
}

declare module 'fastify' {
  interface FastifyInstance {
    health: HealthServices;
  }
}

/** Every configured secret that could reach an upstream request (scrubbed from error text). */
export function configSecrets(config: Config): string[] {
  return (Object.keys(config) as (keyof Config)[])
    .filter((k) => /(_API_KEY|_PIN|_TOKEN)$/.test(k))
    .map((k) => String(config[k] ?? ''))
    .filter(Boolean);
}

async function providersPlugin(app: FastifyInstance): Promise<void> {
  const config = app.config;
  const providers: Providers = createProviderDirectory(config);
  const secrets = configSecrets(config);
  const http = createHttpClient({ userAgent: config.SIFT_USER_AGENT, secrets });
  const recorder = new HealthRecorder(app.pool, { log: app.log });
  const reader = createStatusReader(app.pool);
  recorder.onStatusWritten(() => reader.invalidate());
  const runner = createRunner({ http, recorder, providers, log: app.log, secrets });

  let scheduler: ProbeScheduler | undefined;
  let oneShot: ProbeScheduler | undefined;
  const makeScheduler = (intervalMs: number) =>
    startProbeScheduler({
      pool: app.pool,
      run: async () => {
        await runProbes(config, providers, runner);
        await recorder.flush();
      },
      intervalMs,
      initialDelayMs: PROBE_FIRST_RUN_MS,
      log: app.log,
    });

  app.decorate('providers', providers);
  app.decorate('upstream', { call: runner.call });
  app.decorate('health', {
    recorder,
    reader,
    runner,
    http,
    probeNow: () => (scheduler ?? (oneShot ??= makeScheduler(0))).runOnce(),
  } satisfies HealthServices);

  app.lifecycle.onFlush('provider-health', () => recorder.flush());

  app.addHook('onListen', async () => {
    if (!scheduler && config.PROBE_INTERVAL_SECONDS > 0)
      scheduler = makeScheduler(config.PROBE_INTERVAL_SECONDS * 1000);
  });
  app.addHook('onClose', async () => {
    await Promise.all([scheduler?.stop(), oneShot?.stop()]);
    await recorder.close();
    await http.close();
  });
}

// Decorations are visible to the whole app, not only inside this plugin.
(providersPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export { providersPlugin };
