import type { CallerContext } from '../caller.js';
import { asUpstreamError } from '../failures.js';
import type { HealthRecorder, ObservationSource } from '../health-recorder.js';
import { HttpFailure } from '../http.js';
import { oneLine, safeUrl } from '../redact.js';
import type { ProviderSuspensions } from '../suspension.js';
import {
  REFUSAL_STATUSES,
  type ProviderCall,
  type ProviderSlug,
  type Refusal,
  UpstreamError,
} from '../../providers/types.js';

/**
 * A request the upstream refused for its size (414 URI Too Long; 431 from servers that count the
 * request line with the headers, whose own size Sift keeps fixed): the caller's text made it so,
 * whatever the adapter reads. The HTTP layer refuses an over-long URL the same way, unsent.
 */
function tooLongRefusal(status: number): Refusal | null {
  if (status !== 414 && status !== 431) return null;
  return {
    cause: 'caller',
    parameter: 'q',
    upstreamParameter: 'URL',
    value: '',
    message: 'The query is too long for the search providers: shorten it.',
  };
}

/*
 * Stage 6, record: every call made is recorded, its success or its failure, in health
 * (health-recorder.ts), the suspensions and the metrics.
 *
 * - Success only for a 2xx answer whose body is the expected JSON; it lifts a suspension.
 * - A refusal of the request (its adapter reads a parameter in a 400, 404, 414 or 422; any 414 or
 *   431, the request being too long, is the caller's `q`) is recorded nowhere: the caller's error.
 * - A failure, with a safe message, counts toward a suspension when a search made it (probes run
 *   whatever the suspensions say, and their failures do not extend them).
 * - A refusal of one of the request's parameters (a 400, 404, 414 or 422 that the call's adapter
 *   reads as naming one, `ProviderCall.refusal`) is the request's fault, not the provider's: a
 *   failure of kind `refused`, never recorded in health nor counted toward a suspension. One of a
 *   value Sift derived (its mapping to the upstream's list) is logged at warn once per cause.
 */

export interface RecordLog {
  warn(obj: unknown, msg?: string): void;
}

export interface RecordDeps {
  recorder: HealthRecorder;
  suspensions?: ProviderSuspensions;
  log?: RecordLog;
  onCall?: (
    provider: ProviderSlug,
    source: ObservationSource,
    outcome: 'ok' | UpstreamError['kind'],
    seconds: number,
  ) => void;
}

export interface CallRecord {
  /** A call that answered as expected. */
  succeeded(provider: ProviderSlug, source: ObservationSource, startedAt: number): void;
  /**
   * A call that failed: the failure to hand back (recorded unless it is a refusal of the request's own
   * parameter). `caller`: whom the call was made for (it pays for a call the upstream refused for its own value).
   */
  failed(
    call: ProviderCall<unknown>,
    source: ObservationSource,
    err: unknown,
    startedAt: number,
    caller?: CallerContext,
  ): UpstreamError;
}

/** Distinct refusals of derived values logged so far (bounded: they are Sift's own values, few by construction). */
const MAX_LOGGED_REFUSALS = 256;

export function recordCalls(deps: RecordDeps): CallRecord {
  const loggedRefusals = new Set<string>();

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

  /** The failure of a call whose upstream refused one of its parameters, or null for any other failure. */
  function refusalOf(call: ProviderCall<unknown>, err: unknown): UpstreamError | null {
    if (!(err instanceof HttpFailure) || err.status === undefined) return null;
    let refusal: Refusal | null = null;
    try {
      if (call.refusal && REFUSAL_STATUSES.has(err.status)) refusal = call.refusal(err.status, err.body ?? '');
    } catch {
      refusal = null;
    }
    refusal ??= tooLongRefusal(err.status);
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

  return {
    succeeded(provider, source, startedAt) {
      const ms = performance.now() - startedAt;
      deps.recorder.record({ provider, ok: true, latencyMs: ms, source });
      deps.suspensions?.succeeded(provider);
      deps.onCall?.(provider, source, 'ok', ms / 1000);
    },
    failed(call, source, err, startedAt, caller) {
      const { provider } = call;
      const ms = performance.now() - startedAt;
      const refused = refusalOf(call, err);
      if (refused) {
        // The upstream counted the call: the caller pays for it even though it answers 400.
        if (caller && refused.callerRefused) caller.refusedCalls++;
        deps.onCall?.(provider, source, 'refused', ms / 1000);
        return refused;
      }
      const failure = asUpstreamError(provider, err);
      deps.recorder.record({ provider, ok: false, error: failure.message, latencyMs: ms, source });
      deps.onCall?.(provider, source, failure.kind, ms / 1000);
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
      return failure;
    },
  };
}
