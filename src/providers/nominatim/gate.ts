import { type ProviderCall, type ProviderTask, UpstreamError } from '../types.js';

/*
 * Nominatim's usage policy for the public server (upstreams.md section 14):
 * at most one request per second for the whole application. Each instance
 * keeps its calls to nominatim.openstreetmap.org one second apart: a call
 * waits its turn for at most MAX_WAIT_MS, else it is refused at once
 * (NominatimBusy, answered 503 with Retry-After by the maps endpoint). A
 * self-hosted NOMINATIM_BASE_URL has no gate. Only real upstream calls pass
 * the gate: answers served from the cache do not.
 */

export const PUBLIC_NOMINATIM_HOST = 'nominatim.openstreetmap.org';
export const GATE_INTERVAL_MS = 1000;
export const GATE_MAX_WAIT_MS = 2000;

export class RateGateBusy extends Error {
  override name = 'RateGateBusy';
  constructor(
    /** When a new call would be let through without waiting longer than allowed, ms from now. */
    readonly retryAfterMs: number,
  ) {
    super('rate gate busy');
  }
}

export interface RateGate {
  /**
   * Takes the next free slot: resolves when the call may start (at once, or
   * after waiting at most maxWaitMs); throws RateGateBusy, synchronously and
   * without taking a slot, when the wait would be longer.
   */
  acquire(): Promise<void>;
}

export interface RateGateOptions {
  /** Minimum time between two calls, ms (default 1000). */
  intervalMs?: number;
  /** Longest a call waits for its slot, ms (default 2000). */
  maxWaitMs?: number;
  /** Monotonic clock, ms. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export function createRateGate(options: RateGateOptions = {}): RateGate {
  const interval = options.intervalMs ?? GATE_INTERVAL_MS;
  const maxWait = options.maxWaitMs ?? GATE_MAX_WAIT_MS;
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  /** The earliest start of the next call. */
  let next = Number.NEGATIVE_INFINITY;
  return {
    acquire() {
      const t = now();
      const slot = Math.max(t, next);
      const wait = slot - t;
      if (wait > maxWait) throw new RateGateBusy(wait - maxWait);
      next = slot + interval;
      return wait > 0 ? sleep(wait) : Promise.resolve();
    },
  };
}

/** Whether a base URL is the public Nominatim server (the one the policy binds). */
export function isPublicNominatim(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname.replace(/\.$/, '') === PUBLIC_NOMINATIM_HOST;
  } catch {
    return false;
  }
}

/** The public server's gate, shared by every caller in this process (maps, cards). */
const publicGate = createRateGate();

/** The gate for calls to `baseUrl`: the shared one for the public server, none for a self-hosted one. */
export function nominatimGate(baseUrl: string): RateGate | null {
  return isPublicNominatim(baseUrl) ? publicGate : null;
}

/** The gate refused a call: the maps endpoint answers 503 with Retry-After (seconds). Never recorded in health. */
export class NominatimBusy extends UpstreamError {
  override name = 'NominatimBusy';
  constructor(readonly retryAfterSeconds: number) {
    super('provider_13', 'rate_limited', 'local limit of one request per second to the public Nominatim server');
  }
}

/**
 * `call` behind `gate` (none: the call itself). The gated form is a flow, so
 * the runner caches its value like the call's (same TTL, keyed by the
 * request) and a cached answer never waits for the gate.
 */
export function gatedTask<T>(call: ProviderCall<T>, gate: RateGate | null): ProviderTask<T> {
  if (!gate) return call;
  const { cacheTtlMs, size, ...step } = call;
  return {
    provider: call.provider,
    key: `${call.request.method ?? 'GET'} ${call.request.url}`,
    cacheTtlMs,
    size,
    async run(steps) {
      try {
        await gate.acquire();
      } catch (err) {
        if (err instanceof RateGateBusy) throw new NominatimBusy(Math.max(1, Math.ceil(err.retryAfterMs / 1000)));
        throw err;
      }
      return steps.call(step);
    },
  };
}
