import type { ProviderSlug, UpstreamError } from './types.js';

/*
 * Per-provider suspension (DESIGN.md section 3), like SearXNG's: a provider
 * that keeps failing is skipped for a while, so a dead upstream costs
 * searches neither latency nor quota. While suspended, a search's call to it
 * is not made: it is listed in `unresponsive` as `unavailable` (answers still
 * in the cache are served). Probes are never skipped, and their success, like
 * any success, lifts a suspension.
 *
 * - `afterFailures` failures in a row of the same kind (no success between,
 *   and all timeouts, or all HTTP 500, or all refused connections…) suspend
 *   the provider for `firstMs`; each failure after a suspension ended (the
 *   trial call) suspends it again for twice as long as the last time, up to
 *   `maxMs`. A success forgets everything. A dead or overloaded upstream
 *   fails the same way every time; a failure of another kind starts the count
 *   again, so a run of different, passing faults does not switch a provider
 *   off.
 * - A 429 or 503 with Retry-After suspends it at once, for what the upstream
 *   asked (at most RETRY_AFTER_MAX_MS).
 * - Only failures that say the upstream is unwell count: timeouts, refused or
 *   reset connections, 5xx, 401/403/408/429, redirects, bodies that are not
 *   the expected JSON or too large. An upstream 4xx such as 400, 404, 414 or
 *   422 is an answer to this request's parameters (a bad `lang`, a very long
 *   query): it does not count, or one client could switch a provider off for
 *   everyone.
 * - Calls already in flight when a suspension begins finish; their failures
 *   do not extend it.
 *
 * The state is this instance's (in memory): each instance finds out for
 * itself, as SearXNG does per process.
 */

export interface SuspensionPolicy {
  /** Failures in a row that suspend a provider; 0 = never on failures (Retry-After still does). */
  afterFailures: number;
  /** The first interval (ms); doubled for each suspension in a row. */
  firstMs: number;
  /** The longest interval (ms). */
  maxMs: number;
}

/** The longest wait honoured from an upstream's Retry-After. */
export const RETRY_AFTER_MAX_MS = 3_600_000;

export interface Suspended {
  provider: ProviderSlug;
  /** ms until the provider is tried again. */
  remainingMs: number;
  /** Failures in a row so far. */
  failures: number;
}

interface State {
  failures: number;
  /** The kind of the failures counted (see signatureOf). */
  signature: string;
  /** Suspensions in a row: the next one lasts firstMs * 2^level. */
  level: number;
  /** Clock time the current suspension ends (0: never suspended in this streak). */
  until: number;
}

export interface SuspensionLog {
  warn(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
}

/** Whether a failure says the upstream is unwell (see above), as opposed to refusing this request's parameters. */
export function countsTowardSuspension(error: UpstreamError): boolean {
  switch (error.kind) {
    case 'timeout':
    case 'connect':
    case 'rate_limited':
    case 'bad_response':
    case 'too_large':
      return true;
    case 'http_status': {
      const s = error.status ?? 0;
      return s >= 500 || (s >= 300 && s < 400) || s === 401 || s === 403 || s === 408 || s === 429;
    }
    default:
      return false;
  }
}

/** Failures of one signature are "the same way" of failing. */
function signatureOf(error: UpstreamError): string {
  return error.kind === 'http_status' ? `http_status ${error.status ?? 0}` : error.kind;
}

export class ProviderSuspensions {
  private readonly states = new Map<ProviderSlug, State>();

  constructor(
    readonly policy: SuspensionPolicy,
    private readonly log?: SuspensionLog,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** ms until the provider may be called again; 0 when it may be called now. */
  remainingMs(provider: ProviderSlug): number {
    const s = this.states.get(provider);
    if (!s || s.until === 0) return 0;
    const left = s.until - this.clock();
    return left > 0 ? left : 0;
  }

  succeeded(provider: ProviderSlug): void {
    const s = this.states.get(provider);
    if (!s) return;
    this.states.delete(provider);
    if (s.until !== 0) this.log?.info({ provider }, 'provider answers again: suspension lifted');
  }

  failed(error: UpstreamError): void {
    if (!countsTowardSuspension(error)) return;
    const { provider } = error;
    const now = this.clock();
    const signature = signatureOf(error);
    let s = this.states.get(provider);
    if (!s) {
      s = { failures: 0, signature, level: 0, until: 0 };
      this.states.set(provider, s);
    }
    // In flight when the suspension began: already accounted for.
    if (s.until > now) return;
    if (s.level === 0 && s.signature !== signature) {
      s.failures = 0;
      s.signature = signature;
    }
    s.failures++;

    const asked = error.retryAfterMs;
    if (asked !== undefined && asked > 0) {
      this.suspend(provider, s, now, Math.min(asked, RETRY_AFTER_MAX_MS), error, 'retry_after');
      return;
    }
    const { afterFailures, firstMs, maxMs } = this.policy;
    // After a suspension, any failed trial suspends again (longer).
    if (s.level === 0 && (afterFailures <= 0 || firstMs <= 0 || s.failures < afterFailures)) return;
    const interval = Math.min(maxMs, firstMs * 2 ** Math.min(s.level, 30));
    s.level++;
    this.suspend(provider, s, now, interval, error, 'failures');
  }

  /** Forgets every failure and suspension (as if every provider had just answered). */
  clear(): void {
    this.states.clear();
  }

  /** The providers suspended now. */
  list(): Suspended[] {
    const out: Suspended[] = [];
    for (const provider of this.states.keys()) {
      const remainingMs = this.remainingMs(provider);
      if (remainingMs > 0) out.push({ provider, remainingMs, failures: this.states.get(provider)!.failures });
    }
    return out;
  }

  private suspend(
    provider: ProviderSlug,
    s: State,
    now: number,
    ms: number,
    error: UpstreamError,
    why: 'failures' | 'retry_after',
  ): void {
    s.until = now + ms;
    this.log?.warn(
      { provider, suspendedMs: Math.round(ms), failures: s.failures, why, error: error.message },
      'provider suspended: searches skip it until the interval ends',
    );
  }
}
