import { HttpFailure } from './http.js';
import { type ProviderSlug, UpstreamError } from '../providers/types.js';

/* The failures the pipeline's stages hand back, each as an UpstreamError naming its provider. */

/** Any error of a call as the provider's failure (an unknown one is a bad response). */
export function asUpstreamError(provider: ProviderSlug, err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof HttpFailure) {
    return new UpstreamError(provider, err.kind, err.message, err.status, err.retryAfterMs);
  }
  return new UpstreamError(provider, 'bad_response', 'unexpected failure while reading the response');
}

export function notConfigured(provider: ProviderSlug): UpstreamError {
  return new UpstreamError(provider, 'not_configured', 'provider not configured on this instance');
}

export function suspended(provider: ProviderSlug, remainingMs: number): UpstreamError {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new UpstreamError(provider, 'suspended', `skipped while suspended after failures (${seconds} s left)`);
}

/** The request's deadline or abort cut the call short before it was made. */
export function cutShort(provider: ProviderSlug, signal: AbortSignal): UpstreamError {
  return signal.reason instanceof HttpFailure
    ? asUpstreamError(provider, signal.reason)
    : new UpstreamError(provider, 'timeout', 'request deadline passed');
}
