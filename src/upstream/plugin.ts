import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { configurationSummary, providerConfiguration } from '../providers/configuration.js';
import type { HealthRecorder, HealthRecorderOptions } from './health-recorder.js';
import { type LimitsView, readLimits } from './pacing/limits-view.js';
import type { BudgetCrossing } from './pacing/pacer.js';
import type { SharedCache } from './shared-cache.js';
import { type StatusReader, createStatusReader } from './health-store.js';
import { type ProbeScheduler, runProbes, startProbeScheduler } from './probes.js';
import { createProviderServices } from './services.js';
import type { ProviderSuspensions, SuspensionNote } from './suspension.js';
import type { ProviderSlug, Upstream } from '../providers/types.js';
import type { CallerContext } from './caller.js';

/*
 * Decorates the app with the upstream machinery: app.providers (what is
 * configured), app.upstream (the runner every search uses) and app.health
 * (the recorder and the status reader). Registers the recorder's flush with
 * the lifecycle, and starts the probe schedule once the server listens.
 */

export const PROBE_FIRST_RUN_MS = 10_000;
const SHARED_CACHE_PRUNE_MS = 60_000;

export interface HealthServices {
  recorder: HealthRecorder;
  reader: StatusReader;
  /** Runs the probes once now (under the probe lock); false when another instance holds it. */
  probeNow(): Promise<boolean>;
  /** Providers this instance's searches skip for now. */
  suspensions: ProviderSuspensions;
  /** What limits each configured provider now (pacing, budget, the upstream's own count); unlimited ones left out. */
  limits(): Promise<Map<ProviderSlug, LimitsView>>;
  /** Told when a call of this process took a budget to 80 % or 100 % (once per deployment, share and period). */
  onBudgetCrossed(listener: (crossing: BudgetCrossing) => void): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The runner every search uses; `for(caller)` the same, making its calls for an admitted request's caller. */
    upstream: Upstream & { for(caller: CallerContext): Upstream };
    health: HealthServices;
    /** The response cache level every worker and instance shares (null: this process keeps to its own). */
    sharedCache: SharedCache | null;
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
  const budgetListeners: ((crossing: BudgetCrossing) => void)[] = [];
  const services = createProviderServices(config, app.pool, {
    log: app.log,
    cache: app.searchCache,
    shareCache: true,
    onCall: app.metrics?.upstreamCall,
    onBudgetCrossed: (crossing) => {
      for (const listener of budgetListeners) listener(crossing);
    },
    recorder: { onTransitions: options.onTransitions },
  });
  // Any instance may prune the shared cache; each does it once a minute.
  const pruning = services.shared
    ? setInterval(() => {
        services.shared?.prune().catch((err: unknown) => app.log.warn({ err }, 'shared cache: prune failed'));
      }, SHARED_CACHE_PRUNE_MS).unref()
    : undefined;
  const { providers, recorder, runner, suspensions } = services;
  const reader = createStatusReader(app.pool);
  recorder.onStatusWritten(() => reader.invalidate());
  // The workers of one server suspend a provider together, and show a state another wrote at once (cluster/peers.ts).
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
  app.decorate('sharedCache', services.shared ?? null);
  app.decorate('upstream', { call: runner.call, gather: runner.gather, for: runner.for });
  app.decorate('health', {
    recorder,
    reader,
    probeNow: () => (scheduler ?? (oneShot ??= makeScheduler(0))).runOnce(),
    suspensions,
    limits: () =>
      readLimits(
        app.pool,
        services.plans,
        providers.configured().map((p) => p.slug),
      ),
    onBudgetCrossed: (listener) => budgetListeners.push(listener),
  } satisfies HealthServices);

  app.lifecycle.onFlush('provider-health', () => recorder.flush());

  app.addHook('onListen', async () => {
    if (!scheduler && config.PROBE_INTERVAL_SECONDS > 0)
      scheduler = makeScheduler(config.PROBE_INTERVAL_SECONDS * 1000);
  });
  app.addHook('onClose', async () => {
    clearInterval(pruning);
    await Promise.all([scheduler?.stop(), oneShot?.stop()]);
    await services.close();
  });
}

// Decorations are visible to the whole app, not only inside this plugin.
const plugin = fastifyPlugin(providersPlugin, {
  name: 'sift-upstream',
  decorators: { fastify: ['config', 'pool', 'lifecycle', 'searchCache'] },
});
export { plugin as providersPlugin };
