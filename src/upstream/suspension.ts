import type { ProviderSlug, UpstreamError } from '../providers/types.js';

/*
 * Per-provider suspension (docs/architecture.md, Providers), like SearXNG's: a provider
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
 * itself, as SearXNG does per process. The workers of one server
 * (WORKERS > 1) share what they learn instead (`shareWith`/`apply`, relayed
 * by the cluster primary): each counted failure and each success that ends a
 * streak, so a provider is suspended on every worker by the same failures,
 * as it would be in a single process.
 */

/**
 * What one worker learnt about a provider, for the other workers to apply as
 * if they had seen it: a success that ends a failure streak, or a failure
 * that counts toward a suspension.
 */
export type SuspensionNote =
  | { provider: ProviderSlug; ok: true }
  | { provider: ProviderSlug; ok: false; signature: string; retryAfterMs?: number; message: string };

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
    case 'network':
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
  private share: ((note: SuspensionNote) => void) | undefined;

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

  /**
   * Sends what this instance observes from now on (counted failures, and
   * successes that end a streak) to `share`, for the other workers' `apply`.
   */
  shareWith(share: (note: SuspensionNote) => void): void {
    this.share = share;
  }

  /** Applies what another worker observed, as if observed here (not shared again, not logged again). */
  apply(note: SuspensionNote): void {
    if (note.ok) this.lift(note.provider, false);
    else this.count(note, false);
  }

  succeeded(provider: ProviderSlug): void {
    // Only a success that ends a streak is news: the states are the same on every worker.
    if (this.states.has(provider)) this.lift(provider, true);
  }

  failed(error: UpstreamError): void {
    if (!countsTowardSuspension(error)) return;
    const note = {
      provider: error.provider,
      ok: false as const,
      signature: signatureOf(error),
      message: error.message,
      ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }),
    };
    this.count(note, true);
  }

  private lift(provider: ProviderSlug, local: boolean): void {
    const s = this.states.get(provider);
    if (!s) return;
    this.states.delete(provider);
    if (local) {
      this.share?.({ provider, ok: true });
      if (s.until !== 0) this.log?.info({ provider }, 'provider answers again: suspension lifted');
    }
  }

  private count(note: Extract<SuspensionNote, { ok: false }>, local: boolean): void {
    const { provider, signature } = note;
    const now = this.clock();
    let s = this.states.get(provider);
    if (!s) {
      s = { failures: 0, signature, level: 0, until: 0 };
      this.states.set(provider, s);
    }
    // In flight when the suspension began: already accounted for.
    if (s.until > now) return;
    if (local) this.share?.(note);
    if (s.level === 0 && s.signature !== signature) {
      s.failures = 0;
      s.signature = signature;
    }
    s.failures++;

    const asked = note.retryAfterMs;
    if (asked !== undefined && asked > 0) {
      this.suspend(provider, s, now, Math.min(asked, RETRY_AFTER_MAX_MS), note, 'retry_after', local);
      return;
    }
    const { afterFailures, firstMs, maxMs } = this.policy;
    // After a suspension, any failed trial suspends again (longer).
    if (s.level === 0 && (afterFailures <= 0 || firstMs <= 0 || s.failures < afterFailures)) return;
    const interval = Math.min(maxMs, firstMs * 2 ** Math.min(s.level, 30));
    s.level++;
    this.suspend(provider, s, now, interval, note, 'failures', local);
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
    note: Extract<SuspensionNote, { ok: false }>,
    why: 'failures' | 'retry_after',
    local: boolean,
  ): void {
    s.until = now + ms;
    // Logged by the worker that saw the failure; the others suspend quietly.
    if (!local) return;
    this.log?.warn(
      { provider, suspendedMs: Math.round(ms), failures: s.failures, why, error: note.message },
      'provider suspended: searches skip it until the interval ends',
    );
  }
}
