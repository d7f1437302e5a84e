import { callCacheKey, flowCacheKey, memoCacheKey } from './cache-key.js';
import { estimateBytes, type SearchCache } from './cache.js';
import { asUpstreamError, notConfigured } from './failures.js';
import type { HealthRecorder, ObservationSource } from './health-recorder.js';
import { HttpFailure, type HttpClient } from './http.js';
import type { Pacer } from './pacing/pacer.js';
import type { SharedCache } from './shared-cache.js';
import { inProcessCache } from './stages/cached.js';
import { fetchParsed } from './stages/fetch.js';
import { unlessSuspended } from './stages/not-suspended.js';
import { paced } from './stages/paced.js';
import { recordCalls, type RecordDeps } from './stages/record.js';
import type { CallerContext } from './caller.js';
import { acrossProcesses } from './stages/shared.js';
import { sharingPolicy } from './shared-policy.js';
import type { ProviderSuspensions } from './suspension.js';
import {
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
 * The one path from search code to upstreams (`app.upstream`). A task goes through these stages,
 * in this order, each a module of stages/ with its own tests; `run` below is the whole path:
 *
 *   configured?  a provider this instance has not configured is refused, nothing recorded
 *   1 cached     this process's answer for the key (stages/cached.ts)
 *   2 shared     another process's answer, or its identical call in flight (stages/shared.ts)
 *   3 suspended? a provider that keeps failing fails at once (stages/not-suspended.ts)
 *   4 paced      the provider's slot under its pacing and budget (stages/paced.ts)
 *   5 fetch      the HTTP request and the adapter's parser (stages/fetch.ts)
 *   6 record     health, suspensions and metrics (stages/record.ts)
 *
 * - The key of both cache levels is built from the call's own parameters (cache-key.ts).
 * - gather(tasks): the tasks of one request, concurrently, under one request deadline that
 *   cancels what is still running (no wait of any stage outlives it); never rejects, and hands
 *   back each task's value or its failure in task order.
 * - A flow (several dependent calls: login then search, geocode then forecast) is cached as a
 *   whole by stages 1-2; each of its steps runs stages 3-6 (and 1-2 only when it asks to be cached).
 * - callAs(call, source): stages 4-6 alone (probes: uncached, whatever the suspensions say).
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
  /** Configured secrets, scrubbed from failure text. */
  secrets?: string[];
  /** Paces and budgets calls across the deployment (none: nothing paced). */
  pacer?: Pacer;
  /** Skips providers that keep failing (none: never skipped). */
  suspensions?: ProviderSuspensions;
  /** Told of every finished call (metrics; absent when metrics are off). */
  onCall?: RecordDeps['onCall'];
}

export interface ProviderRunner extends Upstream {
  /** One call, uncached, recorded with this source (probes use 'probe'). */
  callAs<T>(call: ProviderCall<T>, source: ObservationSource, signal?: AbortSignal, deadlineAt?: number): Promise<T>;
  /** The same runner making every call for `caller` (their share of budgets, the calls refused for them). */
  for(caller: CallerContext): Upstream;
}

/** What one task's run knows besides the task: the request's cancellation and deadline, and whom it is for. */
interface RunContext {
  signal?: AbortSignal;
  deadlineAt?: number;
  caller?: CallerContext;
}

const isFlow = <T>(task: ProviderTask<T>): task is ProviderFlow<T> => 'run' in task;

/**
 * The `unresponsive` entries of a gather's failures, in task order. A provider that refused the
 * caller's own value did answer (that value has nothing there): it is not listed.
 */
export function unresponsiveOf(outcomes: readonly Gathered<unknown>[]): Unresponsive[] {
  const out: Unresponsive[] = [];
  for (const o of outcomes) {
    if (!o.ok && !o.error.callerRefused) out.push(o.error.unresponsive());
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

export function createRunner(deps: RunnerDeps): ProviderRunner {
  const secrets = (deps.secrets ?? []).filter((s) => s.length >= 4);
  // This process keeps answers where keeping pays; always those of providers something limits.
  const cached = inProcessCache(
    deps.cache,
    sharingPolicy((provider) => deps.pacer?.limits(provider) ?? false),
  );
  const shared = acrossProcesses(deps.shared, deps.cache);
  const notSuspended = unlessSuspended(deps.suspensions);
  const pacedBy = paced(deps.pacer, deps.log);
  const record = recordCalls(deps);
  const credentials = new Map<ProviderSlug, ReadonlySet<string>>();

  /** The whole path of one task: the stages in order. */
  function run<T>(task: ProviderTask<T>, context: RunContext = {}): Promise<T> {
    if (!allowed(task)) return Promise.reject(notConfigured(task.provider));
    const { provider } = task;
    const { signal, deadlineAt } = context;
    const key = isFlow(task) ? flowCacheKey(provider, task.key) : callCacheKey(task, credentialsOf(provider));
    const ttlMs = task.cacheTtlMs ?? deps.providers.cacheTtlMs(provider);
    const made = isFlow(task) ? () => runFlow(task, context) : () => callFor(task, 'query', context);
    return cached({ key, ttlMs, size: sizeOf(task), provider }, () =>
      shared(provider, key, ttlMs, { signal, deadlineAt }, () => notSuspended(provider, made)),
    );
  }

  /** Stages 4-6: one real call, paced, fetched and recorded with `source`. */
  function callFor<T>(call: ProviderCall<T>, source: ObservationSource, context: RunContext): Promise<T> {
    const { signal, deadlineAt, caller } = context;
    const timeoutMs = call.timeoutMs ?? deps.providers.timeoutMs(call.provider);
    const waitMs = maxWaitMs(timeoutMs, source, deadlineAt);
    return pacedBy(
      call.provider,
      waitMs,
      signal,
      async (report) => {
        const startedAt = performance.now();
        try {
          const value = await fetchParsed(deps.http, call, secrets, { timeoutMs, signal, onAnswer: report });
          record.succeeded(call.provider, source, startedAt);
          return value;
        } catch (err) {
          throw record.failed(call, source, err, startedAt, caller);
        }
      },
      caller?.userId,
    );
  }

  /** A flow's steps: each step through stages 3-6 (1-2 too when it asks to be cached). */
  function runFlow<T>(flow: ProviderFlow<T>, context: RunContext): Promise<T> {
    const { signal, deadlineAt } = context;
    const steps: FlowSteps = {
      call: (call) => {
        if (!allowed(call)) return Promise.reject(notConfigured(call.provider));
        const { provider } = call;
        const made = () => notSuspended(provider, () => callFor(call, 'query', context));
        // A step is cached only when it asks to be (the flow's value is cached as a whole).
        const ttlMs = call.cacheTtlMs ?? 0;
        if (ttlMs <= 0) return made();
        const key = callCacheKey(call, credentialsOf(provider));
        return cached({ key, ttlMs, size: sizeOf(call), provider }, () =>
          shared(provider, key, ttlMs, { signal, deadlineAt }, made),
        );
      },
      // Memos (a login token) stay in their process: never shared.
      memo: (key, ttlMs, compute) => cached({ key: memoCacheKey(flow.provider, key), ttlMs, size: () => 256 }, compute),
      forget: (key) => deps.cache?.delete(memoCacheKey(flow.provider, key)),
    };
    return flow.run(steps).catch((err: unknown) => {
      throw asUpstreamError(flow.provider, err);
    });
  }

  function allowed(task: ProviderTask<unknown>): boolean {
    const p = task.provider;
    if (deps.providers.isConfigured(p)) return true;
    return !isFlow(task) && task.ownCredential === true && !deps.providers.isDisabled(p);
  }

  /** The parameter names the provider's descriptor marks as credentials (left out of cache keys). */
  function credentialsOf(provider: ProviderSlug): ReadonlySet<string> {
    let names = credentials.get(provider);
    if (!names) {
      names = new Set(deps.providers.get(provider)?.credentialParameters ?? []);
      credentials.set(provider, names);
    }
    return names;
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

  async function gather<T>(
    tasks: readonly ProviderTask<T>[],
    options: GatherOptions = {},
    caller?: CallerContext,
  ): Promise<Gathered<T>[]> {
    const settle = (task: ProviderTask<T>, p: Promise<T>): Promise<Gathered<T>> =>
      p.then(
        (value) => ({ provider: task.provider, ok: true as const, value }),
        (err: unknown) => ({ provider: task.provider, ok: false as const, error: asUpstreamError(task.provider, err) }),
      );
    const deadlineMs = options.deadlineMs;
    if (deadlineMs === undefined) return Promise.all(tasks.map((task) => settle(task, run(task, { caller }))));

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
            Promise.race([run(task, { signal: controller.signal, deadlineAt, caller }), expired]).catch(
              (err: unknown) => {
                if (err instanceof Error && err.message === 'deadline' && !(err instanceof UpstreamError)) {
                  throw new UpstreamError(task.provider, 'timeout', 'request deadline passed');
                }
                throw err;
              },
            ),
          ),
        ),
      );
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    call: (task) => run(task),
    gather: (tasks, options) => gather(tasks, options),
    callAs: (call, source, signal, deadlineAt) => callFor(call, source, { signal, deadlineAt }),
    for: (caller) => ({
      call: (task) => run(task, { caller }),
      gather: (tasks, options) => gather(tasks, options, caller),
    }),
  };
}

const sizeOf = <T>(task: ProviderTask<T>): ((value: T) => number) =>
  task.size ? (v: T) => task.size!(v) : estimateBytes;
