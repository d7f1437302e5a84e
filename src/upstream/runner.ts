import { estimateBytes, type SearchCache } from './cache.js';
import { currentCaller } from './caller.js';
import type { HealthRecorder, ObservationSource } from './health-recorder.js';
import type { CallOutcome, Pacer } from './pacing/pacer.js';
import type { SharedCache } from './shared-cache.js';
import { HttpFailure, type HttpClient } from './http.js';
import { oneLine, redactSecrets, requestSecrets, safeUrl } from './redact.js';
import type { ProviderSuspensions } from './suspension.js';
import {
  REFUSAL_STATUSES,
  type Refusal,
  type FlowSteps,
  type Gathered,
  type GatherOptions,
  type ProviderCall,
  type ProviderDirectory,
  type ProviderFlow,
  type ProviderSlug,
  type ProviderTask,
  type Unresponsive,
  type Upstream,
  UpstreamError,
} from '../providers/types.js';

/*
 * The one path from search code to upstreams (`app.upstream`).
 *
 * - call(task): refuses unconfigured providers (nothing recorded), serves the
 *   task from the per-provider cache or runs it, and records every outcome:
 *   success only for a 2xx answer whose body is the expected JSON; every
 *   failure with a safe message.
 * - gather(tasks): the tasks of one request, concurrently, under one request
 *   deadline that cancels what is still running; never rejects, and hands
 *   back each task's value or its failure in task order.
 * - A flow (several dependent calls: login then search, geocode then
 *   forecast) runs its steps through the same machinery and is cached as a
 *   whole.
 * - A suspended provider (suspension.ts) is not called by searches: its
 *   tasks fail at once as `unavailable`, nothing recorded; cached answers are
 *   still served. Searches' failures feed the suspensions, every success
 *   (probes' too) lifts them.
 * - A paced provider (pacing/) waits for its slot before each real call, up
 *   to half its timeout; without one in time it sits the request out
 *   (`paced`, listed as rate_limited; `budget_exhausted` when its budget is
 *   spent), nothing recorded. Cached answers never wait.
 * - A refusal of one of the request's parameters (a 400, 404, 414 or 422 that
 *   the call's adapter reads as naming one, `ProviderCall.refusal`) is the
 *   request's fault, not the provider's: a failure of kind `refused`, never
 *   recorded in health nor counted toward a suspension. A refused value the
 *   caller gave is answered to the caller (`refusalErrors`); one Sift derived
 *   (its mapping to the upstream's list) is logged at warn once per cause.
 */

export interface RunnerLog {
  warn(obj: unknown, msg?: string): void;
}

export interface RunnerDeps {
  http: HttpClient;
  recorder: HealthRecorder;
  providers: ProviderDirectory;
  /** Parsed answers are reused from here for their TTL (none: nothing is cached). */
  cache?: SearchCache;
  /** The level behind `cache` that every worker and instance shares (none: per process only). */
  shared?: SharedCache;
  log?: RunnerLog;
  /** Configured secrets, scrubbed from failure text and masked out of cache keys. */
  secrets?: string[];
  /** Paces and budgets calls across the deployment (none: nothing paced). */
  pacer?: Pacer;
  /** Skips providers that keep failing (none: never skipped). */
  suspensions?: ProviderSuspensions;
  /** Told of every finished call (metrics; absent when metrics are off). */
  onCall?: (
    provider: ProviderSlug,
    source: ObservationSource,
    outcome: 'ok' | UpstreamError['kind'],
    seconds: number,
  ) => void;
}

export interface ProviderRunner extends Upstream {
  /** One call, uncached, recorded with this source (probes use 'probe'). */
  callAs<T>(call: ProviderCall<T>, source: ObservationSource, signal?: AbortSignal, deadlineAt?: number): Promise<T>;
}

const isFlow = <T>(task: ProviderTask<T>): task is ProviderFlow<T> => 'run' in task;

/**
 * The `unresponsive` entries of a gather's failures, in task order. A provider that refused the
 * caller's own value did answer (that value has nothing there): it is not listed.
 */
export function unresponsiveOf(outcomes: readonly Gathered<unknown>[]): Unresponsive[] {
  const out: Unresponsive[] = [];
  for (const o of outcomes) {
    if (!o.ok && !o.error.callerRefused) out.push({ engine: o.provider, reason: o.error.reason });
  }
  return out;
}

/** The caller's parameters that upstreams refused, each with Sift's message (a 400's body), or null when none was. */
export function refusalErrors(outcomes: readonly Gathered<unknown>[]): Record<string, string> | null {
  let errors: Record<string, string> | null = null;
  for (const o of outcomes) {
    const refusal = o.ok ? undefined : o.error.refusal;
    if (refusal?.cause !== 'caller') continue;
    errors ??= {};
    errors[refusal.parameter] ??= refusal.message;
  }
  return errors;
}

/** Distinct refusals of derived values logged so far (bounded: they are Sift's own values, few by construction). */
const MAX_LOGGED_REFUSALS = 256;

function asUpstreamError(provider: ProviderSlug, err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof HttpFailure) {
    return new UpstreamError(provider, err.kind, err.message, err.status, err.retryAfterMs);
  }
  return new UpstreamError(provider, 'bad_response', 'unexpected failure while reading the response');
}

export function createRunner(deps: RunnerDeps): ProviderRunner {
  const secrets = (deps.secrets ?? []).filter((s) => s.length >= 4);
  const loggedRefusals = new Set<string>();
  const maskedSecrets = secrets.flatMap((s) => (encodeURIComponent(s) === s ? [s] : [s, encodeURIComponent(s)]));

  /** Cache keys never hold a secret: configured credentials are masked out. */
  function mask(text: string): string {
    for (const s of maskedSecrets) if (text.includes(s)) text = text.split(s).join('*');
    return text;
  }

  function allowed(task: ProviderTask<unknown>): boolean {
    const p = task.provider;
    if (deps.providers.isConfigured(p)) return true;
    return !isFlow(task) && task.ownCredential === true && !deps.providers.isDisabled(p);
  }

  /**
   * How long a call may wait for its pacing slot: half its timeout (the rest is the call's), and
   * within a gather's deadline half of what is left of it. Probes are not in a hurry.
   */
  function maxWaitMs(timeoutMs: number, source: ObservationSource, deadlineAt?: number): number {
    if (source === 'probe') return timeoutMs;
    const half = timeoutMs / 2;
    return deadlineAt === undefined ? half : Math.min(half, Math.max(0, (deadlineAt - performance.now()) / 2));
  }

  /** A slot under the provider's pacing (null: none needed); a failure to get one is never the provider's. */
  async function admit(provider: ProviderSlug, maxWait: number, signal?: AbortSignal) {
    if (!deps.pacer) return null;
    try {
      return await deps.pacer.admit(provider, maxWait, signal, currentCaller()?.userId);
    } catch (err) {
      if (err instanceof UpstreamError) throw err;
      if (err instanceof HttpFailure) throw asUpstreamError(provider, err);
      deps.log?.warn({ provider, error: err instanceof Error ? err.message : String(err) }, 'pacing unavailable');
      throw new UpstreamError(provider, 'paced', 'pacing could not be checked (database unavailable)');
    }
  }

  async function callAs<T>(
    call: ProviderCall<T>,
    source: ObservationSource,
    signal?: AbortSignal,
    deadlineAt?: number,
  ): Promise<T> {
    const { provider } = call;
    const timeoutMs = call.timeoutMs ?? deps.providers.timeoutMs(provider);
    const permit = await admit(provider, maxWaitMs(timeoutMs, source, deadlineAt), signal);
    const started = performance.now();
    let outcome: CallOutcome;
    try {
      const res = await deps.http.request({
        ...call.request,
        timeoutMs,
        signal,
      });
      outcome = res.limitHeaders ?? {};
      const text = res.body.toString('utf8');
      let body: unknown = text;
      if (!call.text) {
        try {
          body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        } catch {
          // An HTML page instead of JSON (a captive portal, a proxy's error page) says so by its type.
          const type =
            res.contentType && !/json/i.test(res.contentType) ? ` (content type ${oneLine(res.contentType, 60)})` : '';
          throw new UpstreamError(provider, 'bad_response', `response is not valid JSON${type}`, res.status);
        }
      }
      let value: T;
      try {
        value = call.parse(body);
      } catch (err) {
        // A parser may say precisely what is wrong (probes do).
        if (err instanceof UpstreamError) throw err;
        const all = [...secrets, ...requestSecrets(call.request.url, call.request.headers)];
        const why = err instanceof Error && err.message ? `: ${oneLine(redactSecrets(err.message, all), 120)}` : '';
        throw new UpstreamError(provider, 'bad_response', `unexpected response shape${why}`, res.status);
      }
      deps.recorder.record({ provider, ok: true, latencyMs: performance.now() - started, source });
      deps.suspensions?.succeeded(provider);
      deps.onCall?.(provider, source, 'ok', (performance.now() - started) / 1000);
      return value;
    } catch (err) {
      const refused = refusalOf(call, err);
      if (refused) {
        // The upstream counted the call: the caller pays for it even though it answers 400.
        const caller = refused.callerRefused ? currentCaller() : undefined;
        if (caller) caller.refusedCalls++;
        deps.onCall?.(provider, source, 'refused', (performance.now() - started) / 1000);
        throw refused;
      }
      const failure = asUpstreamError(provider, err);
      deps.recorder.record({
        provider,
        ok: false,
        error: failure.message,
        latencyMs: performance.now() - started,
        source,
      });
      deps.onCall?.(provider, source, failure.kind, (performance.now() - started) / 1000);
      // Probes run whatever the suspensions say, and their failures do not extend them.
      if (source === 'query') deps.suspensions?.failed(failure);
      deps.log?.warn(
        {
          provider,
          kind: failure.kind,
          status: failure.status,
          url: safeUrl(call.request.url),
          error: failure.message,
        },
        'upstream call failed',
      );
      throw failure;
    } finally {
      // What the answer reported is stored before the caller goes on: its next call is paced by it.
      await permit?.release(outcome);
    }
  }

  /** The failure of a call whose upstream refused one of its parameters, or null for any other failure. */
  function refusalOf(call: ProviderCall<unknown>, err: unknown): UpstreamError | null {
    if (!(err instanceof HttpFailure) || !call.refusal || err.status === undefined) return null;
    if (!REFUSAL_STATUSES.has(err.status)) return null;
    let refusal: Refusal | null = null;
    try {
      refusal = call.refusal(err.status, err.body ?? '');
    } catch {
      refusal = null;
    }
    if (!refusal) return null;
    if (refusal.cause === 'mapping') noteMappingRefusal(call, refusal, err.status);
    const what = refusal.cause === 'caller' ? "the caller's" : 'the value Sift derived from';
    return new UpstreamError(
      call.provider,
      'refused',
      `HTTP ${err.status}: the upstream refused ${what} \`${refusal.parameter}\` (as its \`${refusal.upstreamParameter}\`)`,
      err.status,
      undefined,
      refusal,
    );
  }

  /** A refused value of Sift's own mapping is a bug to fix: said once per distinct cause, at warn. */
  function noteMappingRefusal(call: ProviderCall<unknown>, refusal: Refusal, status: number): void {
    const key = `${call.provider} ${refusal.upstreamParameter} ${refusal.value}`;
    if (loggedRefusals.has(key) || loggedRefusals.size >= MAX_LOGGED_REFUSALS) return;
    loggedRefusals.add(key);
    deps.log?.warn(
      {
        provider: call.provider,
        status,
        parameter: refusal.upstreamParameter,
        value: oneLine(refusal.value, 60),
        from: refusal.parameter,
        url: safeUrl(call.request.url),
      },
      `upstream refused the value Sift mapped for its parameter ${refusal.upstreamParameter}`,
    );
  }

  /** Serves `fetch` through the cache when the task's TTL allows. */
  function cached<T>(task: ProviderTask<T>, key: () => string, fetch: () => Promise<T>): Promise<T> {
    const ttl = task.cacheTtlMs ?? deps.providers.cacheTtlMs(task.provider);
    if (!deps.cache || ttl <= 0) return fetch();
    const size = task.size ? (v: T) => task.size!(v) : estimateBytes;
    const k = key();
    const { shared, cache } = deps;
    const fetchOnce = shared ? () => shared.getOrFetch(`${cache.generation} ${k}`, task.provider, ttl, fetch) : fetch;
    return cache.getOrFetch(k, ttl, size, fetchOnce);
  }

  function callKey(call: ProviderCall<unknown>): string {
    const { method = 'GET', url, body } = call.request;
    return mask(body === undefined ? `${call.provider} ${method} ${url}` : `${call.provider} ${method} ${url} ${body}`);
  }

  /** Rejects at once while the provider is suspended; else runs `fetch`. */
  function unlessSuspended<T>(provider: ProviderSlug, fetch: () => Promise<T>): Promise<T> {
    const wait = deps.suspensions?.remainingMs(provider) ?? 0;
    return wait > 0 ? Promise.reject(suspended(provider, wait)) : fetch();
  }

  function runFlow<T>(flow: ProviderFlow<T>, signal?: AbortSignal, deadlineAt?: number): Promise<T> {
    const steps: FlowSteps = {
      call: (call) => {
        if (!allowed(call)) return Promise.reject(notConfigured(call.provider));
        // A step is cached only when it asks to be (the flow's value is cached as a whole).
        const uncached = call.cacheTtlMs === undefined || call.cacheTtlMs <= 0;
        const fetch = () => callAs(call, 'query', signal, deadlineAt);
        return unlessSuspended(call.provider, () => (uncached ? fetch() : cached(call, () => callKey(call), fetch)));
      },
      memo: (key, ttlMs, compute) => {
        const k = mask(`${flow.provider} memo ${key}`);
        if (!deps.cache) return compute();
        return deps.cache.getOrFetch(k, ttlMs, () => 256, compute);
      },
      forget: (key) => deps.cache?.delete(mask(`${flow.provider} memo ${key}`)),
    };
    return flow.run(steps).catch((err: unknown) => {
      throw asUpstreamError(flow.provider, err);
    });
  }

  function run<T>(task: ProviderTask<T>, signal?: AbortSignal, deadlineAt?: number): Promise<T> {
    if (!allowed(task)) return Promise.reject(notConfigured(task.provider));
    if (isFlow(task)) {
      const key = () => mask(`${task.provider} flow ${task.key}`);
      return cached(task, key, () => unlessSuspended(task.provider, () => runFlow(task, signal, deadlineAt)));
    }
    return cached(
      task,
      () => callKey(task),
      () => unlessSuspended(task.provider, () => callAs(task, 'query', signal, deadlineAt)),
    );
  }

  async function gather<T>(tasks: readonly ProviderTask<T>[], options: GatherOptions = {}): Promise<Gathered<T>[]> {
    const settle = (task: ProviderTask<T>, p: Promise<T>): Promise<Gathered<T>> =>
      p.then(
        (value) => ({ provider: task.provider, ok: true as const, value }),
        (err: unknown) => ({ provider: task.provider, ok: false as const, error: asUpstreamError(task.provider, err) }),
      );
    const deadlineMs = options.deadlineMs;
    if (deadlineMs === undefined) return Promise.all(tasks.map((task) => settle(task, run(task))));

    // One deadline over the whole request: what is still running then is cancelled and reported as timed out.
    const deadlineAt = performance.now() + deadlineMs;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // The reason is what health records for the calls it stops (not a bare "cancelled").
        controller.abort(
          new HttpFailure('timeout', `no complete answer within the request deadline (${deadlineMs} ms)`),
        );
        reject(new Error('deadline'));
      }, deadlineMs);
    });
    expired.catch(() => {});
    try {
      return await Promise.all(
        tasks.map((task) =>
          settle(
            task,
            Promise.race([run(task, controller.signal, deadlineAt), expired]).catch((err: unknown) => {
              if (err instanceof Error && err.message === 'deadline' && !(err instanceof UpstreamError)) {
                throw new UpstreamError(task.provider, 'timeout', 'request deadline passed');
              }
              throw err;
            }),
          ),
        ),
      );
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    call: (task) => run(task),
    gather,
    callAs,
  };
}

function notConfigured(provider: ProviderSlug): UpstreamError {
  return new UpstreamError(provider, 'not_configured', 'provider not configured on this instance');
}

function suspended(provider: ProviderSlug, remainingMs: number): UpstreamError {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new UpstreamError(provider, 'suspended', `skipped while suspended after failures (${seconds} s left)`);
}
