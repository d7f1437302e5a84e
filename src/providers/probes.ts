import type pg from 'pg';
import type { Config } from '../config/index.js';
import type { Providers } from './registry.js';
import type { ProviderRunner } from './runner.js';
import { type ProviderCall, type ProviderSlug, UpstreamError } from './types.js';

/*
 * Active checks of the probe-monitored providers, on free endpoints only:
 * Nominatim's status, LibreTranslate's language list, an Open-Meteo
 * geocoding lookup and Frankfurter's latest rates. Outcomes are recorded
 * with source 'probe' through the same runner as searches.
 */

export const PROBE_ORDER: readonly ProviderSlug[] = ['provider_13', 'translate', 'weather', 'currency'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function probeCall(config: Config, slug: ProviderSlug): ProviderCall<true> {
  const timeout = (ms: number) => config.PROVIDER_TIMEOUT_MS || ms;
  switch (slug) {
    case 'provider_13':
      return {
        provider: slug,
        request: { url: `${config.NOMINATIM_BASE_URL}/status?format=json` },
        timeoutMs: timeout(8000),
        parse(body) {
          if (!isObject(body) || !('status' in body)) throw new UpstreamError(slug, 'bad_response', 'status not OK');
          if (body.status !== 0) {
            const message = typeof body.message === 'string' && body.message ? body.message : 'status not OK';
            throw new UpstreamError(slug, 'bad_response', `status ${String(body.status)}: ${message}`);
          }
          return true;
        },
      };
    case 'translate':
      return {
        provider: slug,
        request: { url: `${config.LIBRETRANSLATE_URL}/languages` },
        timeoutMs: timeout(8000),
        parse(body) {
          if (!Array.isArray(body) || body.length === 0)
            throw new UpstreamError(slug, 'bad_response', 'empty language list');
          return true;
        },
      };
    case 'weather':
      return {
        provider: slug,
        request: { url: `${config.OPENMETEO_GEOCODING_URL}/v1/search?name=Paris&count=1&language=en&format=json` },
        timeoutMs: timeout(8000),
        parse(body) {
          if (!isObject(body) || !Array.isArray(body.results) || body.results.length === 0) {
            throw new UpstreamError(slug, 'bad_response', 'geocoding lookup returned no place');
          }
          return true;
        },
      };
    case 'currency':
      return {
        provider: slug,
        request: { url: `${config.FRANKFURTER_BASE_URL}/latest?base=USD` },
        timeoutMs: timeout(10_000),
        parse(body) {
          if (!isObject(body) || !isObject(body.rates) || Object.keys(body.rates).length === 0) {
            throw new UpstreamError(slug, 'bad_response', 'no exchange rates in the answer');
          }
          return true;
        },
      };
    default:
      throw new Error(`${slug} has no probe`);
  }
}

export interface ProbeResult {
  slug: ProviderSlug;
  ok: boolean;
}

/** Probes every configured probe provider once (concurrently); results in probe order. */
export async function runProbes(config: Config, providers: Providers, runner: ProviderRunner): Promise<ProbeResult[]> {
  const slugs = PROBE_ORDER.filter((s) => providers.isConfigured(s));
  return Promise.all(
    slugs.map(async (slug) => {
      try {
        await runner.callAs(probeCall(config, slug), 'probe');
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
    try {
      client = await options.pool.connect();
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
