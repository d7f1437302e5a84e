import type { HealthRecorder, ObservationSource } from './health-recorder.js';
import { HttpFailure, type HttpClient } from './http.js';
import { oneLine, redactSecrets, requestSecrets, safeUrl } from './redact.js';
import { type ProviderCall, type ProviderDirectory, type Upstream, UpstreamError } from './types.js';

/*
 * `app.upstream.call(call)`: the one path from search code to an upstream.
 * Refuses unconfigured providers (nothing recorded), runs the request through
 * the HTTP layer with the provider's timeout, parses the JSON and the
 * provider's shape, and records the outcome: success only for a 2xx answer
 * whose body is the expected JSON; every failure with a safe message.
 */

export interface RunnerLog {
  warn(obj: unknown, msg?: string): void;
}

export interface RunnerDeps {
  http: HttpClient;
  recorder: HealthRecorder;
  providers: ProviderDirectory;
  log?: RunnerLog;
  /** Configured secrets, scrubbed from failure text. */
  secrets?: string[];
}

export interface ProviderRunner extends Upstream {
  /** Like call(), recording the outcome with this source (probes use 'probe'). */
  callAs<T>(call: ProviderCall<T>, source: ObservationSource): Promise<T>;
}

export function createRunner(deps: RunnerDeps): ProviderRunner {
  async function callAs<T>(call: ProviderCall<T>, source: ObservationSource): Promise<T> {
    const { provider } = call;
    const allowed =
      deps.providers.isConfigured(provider) || (call.ownCredential === true && !deps.providers.isDisabled(provider));
    if (!allowed) {
      throw new UpstreamError(provider, 'not_configured', 'provider not configured on this instance');
    }
    const started = performance.now();
    try {
      const res = await deps.http.request({
        ...call.request,
        timeoutMs: call.timeoutMs ?? deps.providers.timeoutMs(provider),
        signal: call.signal,
      });
      const text = res.body.toString('utf8');
      let body: unknown = text;
      if (!call.text) {
        try {
          body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        } catch {
          throw new UpstreamError(provider, 'bad_response', 'response is not valid JSON', res.status);
        }
      }
      let value: T;
      try {
        value = call.parse(body);
      } catch (err) {
        // A parser may say precisely what is wrong (probes do).
        if (err instanceof UpstreamError) throw err;
        const secrets = [...(deps.secrets ?? []), ...requestSecrets(call.request.url, call.request.headers)];
        const why = err instanceof Error && err.message ? `: ${oneLine(redactSecrets(err.message, secrets), 120)}` : '';
        throw new UpstreamError(provider, 'bad_response', `unexpected response shape${why}`, res.status);
      }
      deps.recorder.record({ provider, ok: true, latencyMs: performance.now() - started, source });
      return value;
    } catch (err) {
      const failure =
        err instanceof UpstreamError
          ? err
          : err instanceof HttpFailure
            ? new UpstreamError(provider, err.kind, err.message, err.status)
            : new UpstreamError(provider, 'bad_response', 'unexpected failure while reading the response');
      deps.recorder.record({
        provider,
        ok: false,
        error: failure.message,
        latencyMs: performance.now() - started,
        source,
      });
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
    }
  }

  return {
    call: (call) => callAs(call, 'query'),
    callAs,
  };
}
