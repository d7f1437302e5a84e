import type { FastifyInstance } from 'fastify';
import { configurationSummary, providerConfiguration } from './configuration.js';
import type { HealthRecorder, HealthRecorderOptions } from './health-recorder.js';
import { type StatusReader, createStatusReader } from './health-store.js';
import { type ProbeScheduler, runProbes, startProbeScheduler } from './probes.js';
import { createProviderServices } from './services.js';
import type { ProviderSuspensions, SuspensionNote } from './suspension.js';

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
  /** Runs the probes once now (under the probe lock); false when another instance holds it. */
  probeNow(): Promise<boolean>;
  /** Providers this instance's searches skip for now. */
  suspensions: ProviderSuspensions;
}

declare module 'fastify' {
  interface FastifyInstance {
    health: HealthServices;
  }
}

export interface ProvidersPluginOptions {
  /** Log the one-line-per-group provider summary (once per server: the first worker, or the single process). */
  summary: boolean;
  /** Told of the up/down changes each status write makes, in its transaction (the alerts' outbox). */
  onTransitions?: HealthRecorderOptions['onTransitions'];
}

async function providersPlugin(app: FastifyInstance, options: ProvidersPluginOptions): Promise<void> {
  const config = app.config;
  const services = createProviderServices(config, app.pool, {
    log: app.log,
    cache: app.searchCache,
    onCall: app.metrics?.upstreamCall,
    recorder: { onTransitions: options.onTransitions },
  });
  const { providers, recorder, runner, suspensions } = services;
  const reader = createStatusReader(app.pool);
  recorder.onStatusWritten(() => reader.invalidate());
  // The workers of one server suspend a provider together, and show a state another wrote at once (cluster.ts).
  const peers = app.peers;
  if (peers) {
    suspensions.shareWith((note) => peers.tell('suspension', note));
    peers.hear('suspension', (note) => suspensions.apply(note as SuspensionNote));
    recorder.onStatusWritten(() => peers.tell('status-written', null));
    peers.hear('status-written', () => reader.invalidate());
  }

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

  // One line per group: what this instance can ask, and what it lacks.
  if (options.summary)
    for (const { group, line } of configurationSummary(providerConfiguration(config))) {
      app.log.info({ group }, `providers ${line}`);
    }

  app.decorate('providers', providers);
  app.decorate('upstream', { call: runner.call, gather: runner.gather });
  app.decorate('health', {
    recorder,
    reader,
    probeNow: () => (scheduler ?? (oneShot ??= makeScheduler(0))).runOnce(),
    suspensions,
  } satisfies HealthServices);

  app.lifecycle.onFlush('provider-health', () => recorder.flush());

  app.addHook('onListen', async () => {
    if (!scheduler && config.PROBE_INTERVAL_SECONDS > 0)
      scheduler = makeScheduler(config.PROBE_INTERVAL_SECONDS * 1000);
  });
  app.addHook('onClose', async () => {
    await Promise.all([scheduler?.stop(), oneShot?.stop()]);
    await services.close();
  });
}

// Decorations are visible to the whole app, not only inside this plugin.
(providersPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export { providersPlugin };
