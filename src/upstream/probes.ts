import type pg from 'pg';
import type { Config } from '../config/index.js';
import { FRANKFURTER } from '../providers/frankfurter/index.js';
import { LIBRETRANSLATE } from '../providers/libretranslate/index.js';
import { NOMINATIM } from '../providers/nominatim/index.js';
import { OPEN_METEO } from '../providers/openmeteo/index.js';
import { descriptorOf, PROVIDERS } from '../providers/registry.js';
import type { ProviderRunner } from './runner.js';
import type { ProviderDirectory, ProviderSlug } from '../providers/types.js';

/*
 * Active checks of the probe-monitored providers (each descriptor's `probe`),
 * on free endpoints only: Nominatim's status, LibreTranslate's language list,
 * an Open-Meteo geocoding lookup and Frankfurter's latest rates. Outcomes are
 * recorded with source 'probe' through the same runner as searches.
 */

/** The order probes run and are reported in (the original's). */
const PROBE_RUN_ORDER: readonly ProviderSlug[] = [NOMINATIM, LIBRETRANSLATE, OPEN_METEO, FRANKFURTER];

/** Providers with a probe, in probe order (any probe-carrying provider missing from the list goes last). */
export const PROBE_ORDER: readonly ProviderSlug[] = [
  ...PROBE_RUN_ORDER,
  ...PROVIDERS.filter((p) => p.probe && !PROBE_RUN_ORDER.includes(p.slug)).map((p) => p.slug),
].filter((slug) => descriptorOf(slug).probe !== undefined);

export interface ProbeResult {
  slug: ProviderSlug;
  ok: boolean;
}

/** Probes every configured probe provider once (concurrently); results in probe order. */
export async function runProbes(
  config: Config,
  providers: ProviderDirectory,
  runner: ProviderRunner,
): Promise<ProbeResult[]> {
  const slugs = PROBE_ORDER.filter((s) => providers.isConfigured(s));
  return Promise.all(
    slugs.map(async (slug) => {
      try {
        await runner.callAs(descriptorOf(slug).probe!(config), 'probe');
        return { slug, ok: true };
      } catch {
        return { slug, ok: false };
      }
    }),
  );
}

const PROBE_LOCK_KEY = 7_262_817_303; // arbitrary, constant: "sift probes"

export interface ProbeSchedulerOptions {
  pool: pg.Pool;
  run: () => Promise<unknown>;
  intervalMs: number;
  initialDelayMs: number;
  log?: { warn(obj: unknown, msg?: string): void; debug(obj: unknown, msg?: string): void };
}

export interface ProbeScheduler {
  /** Resolves after the current run (if any) ends; no run starts afterwards. */
  stop(): Promise<void>;
  /** Runs once now, if no other instance holds the probe lock. Returns whether it ran. */
  runOnce(): Promise<boolean>;
}

/**
 * Runs `run` after `initialDelayMs`, then every `intervalMs`, on one instance
 * at a time (a Postgres advisory lock). Timers never keep the process alive.
 */
export function startProbeScheduler(options: ProbeSchedulerOptions): ProbeScheduler {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let current: Promise<boolean> | undefined;

  async function runLocked(): Promise<boolean> {
    let client: pg.PoolClient | undefined;
    // A connection lost while it is held for the probe run is reported on the client: without a
    // listener that report would be an uncaught exception (the probe run itself then fails and logs).
    const onClientError = () => {};
    try {
      client = await options.pool.connect();
      client.on('error', onClientError);
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        PROBE_LOCK_KEY,
      ]);
      if (!rows[0]?.locked) {
        options.log?.debug({}, 'probes skipped: another instance is probing');
        return false;
      }
      try {
        await options.run();
        return true;
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [PROBE_LOCK_KEY]).catch(() => {});
      }
    } catch (err) {
      options.log?.warn({ err }, 'provider probes failed to run');
      return false;
    } finally {
      client?.off('error', onClientError);
      client?.release();
    }
  }

  function runOnce(): Promise<boolean> {
    if (!current) {
      current = runLocked().finally(() => {
        current = undefined;
      });
    }
    return current;
  }

  function schedule(ms: number) {
    if (stopped) return;
    timer = setTimeout(async () => {
      await runOnce();
      schedule(options.intervalMs);
    }, ms);
    timer.unref();
  }

  if (options.intervalMs > 0) schedule(options.initialDelayMs);

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
