/*
 * Shared types of the upstream layer. The registry (registry.ts), the HTTP
 * client (http.ts) and the runner that records health (runner.ts) implement
 * them; search modules only ever call `app.upstream.call(...)`.
 */

import type { ProviderInfo } from './registry.js';

export const PROVIDER_SLUGS = [
  'provider_01',
  'provider_02',
  'provider_03',
  'provider_04',
  'provider_05',
  'provider_06',
  'provider_07',
  'provider_08',
  'provider_09',
  'provider_10',
  'provider_11',
  'provider_12',
  'weather',
  'currency',
  'provider_13',
  'translate',
] as const;

export type ProviderSlug = (typeof PROVIDER_SLUGS)[number];

export type ProviderGroup = 'engine' | 'media' | 'cards' | 'instant' | 'maps' | 'translate';

/** How a failure is classified (also the `reason` values seen by API clients, see FailureReason). */
export type FailureKind =
  | 'timeout'
  | 'connect'
  | 'http_status'
  | 'rate_limited'
  | 'bad_response'
  | 'too_large'
  /** The provider is not configured on this instance: never called, nothing recorded. */
  | 'not_configured';

/** `unresponsive[].reason` in search responses (DESIGN.md section 3). */
export type FailureReason = 'timeout' | 'error' | 'rate_limited' | 'unavailable';

export interface UpstreamRequest {
  method?: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Follow up to 3 redirects (keyless providers only, e.g. Wikipedia). Default false. */
  followRedirects?: boolean;
}

/** One call to one provider: the request, and how to turn the parsed JSON body into a value. */
export interface ProviderCall<T> {
  provider: ProviderSlug;
  request: UpstreamRequest;
  /** Throws (any error) when the JSON is not the expected shape: that is a bad_response failure. */
  parse(body: unknown): T;
  /** Overrides the provider's default timeout. */
  timeoutMs?: number;
  /** Aborts the call early (the caller gave up). */
  signal?: AbortSignal;
  /** Accept a non-JSON text body (passed to parse as a string). Default false. */
  text?: boolean;
  /**
   * The call carries its own credential (Brave Suggest's separate key), so it
   * may run while the provider's main key is unset — never when the provider
   * is in DISABLED_PROVIDERS.
   */
  ownCredential?: boolean;
}

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly provider: ProviderSlug,
    readonly kind: FailureKind,
    /** Safe to show to operators: never contains a secret. */
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  get reason(): FailureReason {
    if (this.kind === 'timeout') return 'timeout';
    if (this.kind === 'rate_limited') return 'rate_limited';
    if (this.kind === 'connect' || this.kind === 'not_configured') return 'unavailable';
    return 'error';
  }
}

/** `app.upstream`: the only way search code reaches an upstream. Records health, classifies failures. */
export interface Upstream {
  /** Resolves with parse(body), or rejects with an UpstreamError (already recorded as a failure). */
  call<T>(call: ProviderCall<T>): Promise<T>;
}

/** `app.providers`: what this instance has configured. */
export interface ProviderDirectory {
  /** Has its key (or is keyless) and is not in DISABLED_PROVIDERS. */
  isConfigured(slug: ProviderSlug): boolean;
  /** Listed in DISABLED_PROVIDERS. */
  isDisabled(slug: ProviderSlug): boolean;
  /** The provider's timeout in ms (PROVIDER_TIMEOUT_MS overrides every default). */
  timeoutMs(slug: ProviderSlug): number;
  /** Configured providers, in registry (display) order. */
  configured(): ProviderInfo[];
  /** The registry entry of a name, or undefined when it is not a provider slug. */
  get(slug: string): ProviderInfo | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    upstream: Upstream;
    providers: ProviderDirectory;
  }
}
