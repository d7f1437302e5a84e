/*
 * Shared types of the upstream layer: what a provider is (its descriptor),
 * what one upstream call is (ProviderCall), a multi-step call (ProviderFlow),
 * and how callers reach upstreams (`app.upstream`: call and gather). Nothing
 * here imports the registry or any adapter, so adapters, the registry, the
 * runner and the search features can all import it without cycles.
 */

import type { Config } from '../config/index.js';
import type { EngineSlice, ImageResult, MediaQuery, NewsResult, VideoResult, WebQuery } from '../contracts/search.js';

/** The spec's provider slugs (spec 4.3). Each is bound to one descriptor (registry.ts checks, at compile time). */
export type ProviderSlug =
  | 'provider_01'
  | 'provider_02'
  | 'provider_03'
  | 'provider_04'
  | 'provider_05'
  | 'provider_06'
  | 'provider_07'
  | 'provider_08'
  | 'provider_09'
  | 'provider_10'
  | 'provider_11'
  | 'provider_12'
  | 'weather'
  | 'currency'
  | 'provider_13'
  | 'translate';

export type ProviderGroup = 'engine' | 'media' | 'cards' | 'instant' | 'maps' | 'translate';

/** How a provider's health is established: by real searches, or by an active probe. */
export type MonitorKind = 'query' | 'probe';

/** How a failure is classified (also the `reason` values seen by API clients, see FailureReason). */
export type FailureKind =
  | 'timeout'
  /** No connection was made: the host name did not resolve, or the host refused or could not be reached. */
  | 'connect'
  /** The connection broke during the exchange: reset, or closed before a complete answer. */
  | 'network'
  | 'http_status'
  | 'rate_limited'
  | 'bad_response'
  | 'too_large'
  /** The provider is not configured on this instance: never called, nothing recorded. */
  | 'not_configured'
  /** Skipped while suspended after repeated failures or a Retry-After (suspension.ts): never called, nothing recorded. */
  | 'suspended'
  /**
   * The upstream refused one parameter of this request (a 400, 404, 414 or 422 that names it): the
   * request's fault, not the provider's, so nothing is recorded in health (see Refusal).
   */
  | 'refused'
  /** Sat out: no slot under the provider's pacing within the request's deadline (pacing/). Nothing recorded. */
  | 'paced'
  /** Sat out: the provider's budget of calls for this period is spent (configured, or as the upstream reports). */
  | 'budget_exhausted';

/** `unresponsive[].reason` in search responses (docs/api.md). */
export type FailureReason = 'timeout' | 'error' | 'unreachable' | 'rate_limited' | 'unavailable' | 'budget_exhausted';

export interface UpstreamRequest {
  method?: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Follow up to 3 redirects (keyless providers only, e.g. Wikipedia). Default false. */
  followRedirects?: boolean;
}

/** The answer statuses an upstream refuses a request's parameter with (bad request, not found, URI too long, unprocessable). */
export const REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 404, 414, 422]);

/**
 * An upstream's refusal of one parameter of a request, as its adapter reads it from the answer.
 * 'caller': the caller's own value (page 50 past Pixabay's last page, a target language the
 * translation backend lacks): answered to the caller as a 400 naming `parameter`. 'mapping': a
 * value Sift derived (a language code mapped to the upstream's list): logged once per distinct
 * cause. Neither is recorded as the provider failing.
 */
export interface Refusal {
  cause: 'caller' | 'mapping';
  /** The caller's parameter the refused value came from (`page`, `lang`, `target`). */
  parameter: string;
  /** The upstream's name of the parameter it refused (`offset`, `search_lang`, `market`). */
  upstreamParameter: string;
  /** The value sent ('' when unknown); only ever a value of a parameter that is not a credential. */
  value: string;
  /** Sift's own words for the caller (never the upstream's text). */
  message: string;
}

/** One call to one provider: the request, and how to turn the parsed JSON body into a value. */
export interface ProviderCall<T> {
  provider: ProviderSlug;
  request: UpstreamRequest;
  /**
   * Throws (any error) when the JSON is not the expected shape: that is a bad_response failure.
   * Returns plain data (no Date, Map, class or undefined in an array): the shared cache level keeps
   * values as JSON, and does not share one that would not come back the same.
   */
  parse(body: unknown): T;
  /** Overrides the provider's default timeout. */
  timeoutMs?: number;
  /** Accept a non-JSON text body (passed to parse as a string). Default false. */
  text?: boolean;
  /**
   * The call carries its own credential (Brave Suggest's separate key), so it
   * may run while the provider's main key is unset — never when the provider
   * is in DISABLED_PROVIDERS.
   */
  ownCredential?: boolean;
  /** How long the parsed value may be reused, ms: overrides the descriptor's cacheTtlMs; 0 = never cached. */
  cacheTtlMs?: number;
  /** Estimated memory of a parsed value in bytes, for the cache bound (default: a walk over the value). */
  size?(value: T): number;
  /**
   * Reads a refusal (an answer with a status in REFUSAL_STATUSES and the start of its body): the
   * parameter refused, or null when the answer is not a refusal of a parameter (a bad key, an
   * unknown path), which is then an ordinary failure.
   */
  refusal?(status: number, body: string): Refusal | null;
}

/** What a flow's steps are run with: the runner's call, under the gather's deadline. */
export interface FlowSteps {
  /** One step: recorded like any call. Not cached on its own unless the call sets cacheTtlMs. */
  call<U>(call: ProviderCall<U>): Promise<U>;
  /** A value kept across requests for `ttlMs` (a login token); computed once when missing. */
  memo<U>(key: string, ttlMs: number, compute: () => Promise<U>): Promise<U>;
  /** Drops a memo (a token the upstream refused). */
  forget(key: string): void;
}

/**
 * A multi-step upstream exchange (geocode then forecast, login then search,
 * search then details) that gather() runs like one call: one deadline, one
 * cache entry for the final value, every step recorded in health.
 */
export interface ProviderFlow<T> {
  provider: ProviderSlug;
  /** Cache key of the final value: everything that changes the answer, never a secret. */
  key: string;
  run(steps: FlowSteps): Promise<T>;
  /** As ProviderCall.cacheTtlMs (default: the descriptor's cacheTtlMs). */
  cacheTtlMs?: number;
  size?(value: T): number;
}

export type ProviderTask<T> = ProviderCall<T> | ProviderFlow<T>;

/** One task's outcome in gather(): its value, or the failure (already recorded in health). */
export type Gathered<T> =
  | { provider: ProviderSlug; ok: true; value: T }
  | { provider: ProviderSlug; ok: false; error: UpstreamError };

export interface GatherOptions {
  /** One deadline over all the tasks (ms); each call is also bounded by its provider's timeout. */
  deadlineMs?: number;
}

/** `unresponsive[]` entry of search responses, as JSON writes it (docs/api.md). */
export interface Unresponsive {
  engine: ProviderSlug;
  reason: FailureReason;
}

/**
 * An `unresponsive[]` entry made from a failure (UpstreamError.unresponsive()). Its kind is kept in
 * a private field: readable where a door words failures finer than `reason` (SearXNG tells a broken
 * connection from one never made), and never part of the JSON.
 */
export class FailedProvider implements Unresponsive {
  readonly #kind: FailureKind;
  constructor(
    readonly engine: ProviderSlug,
    readonly reason: FailureReason,
    kind: FailureKind,
  ) {
    this.#kind = kind;
  }

  /** The kind of failure behind an entry, when it was made from one. */
  static kindOf(entry: Unresponsive): FailureKind | undefined {
    return entry instanceof FailedProvider ? entry.#kind : undefined;
  }
}

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly provider: ProviderSlug,
    readonly kind: FailureKind,
    /** Safe to show to operators: never contains a secret. */
    message: string,
    readonly status?: number,
    /** The wait an upstream asked for with Retry-After on a 429 or 503 (ms). */
    readonly retryAfterMs?: number,
    /** What the upstream refused, for kind 'refused'. */
    readonly refusal?: Refusal,
  ) {
    super(message);
  }

  /** The upstream refused the caller's own value: the caller is answered 400, and the provider is not listed as failing. */
  get callerRefused(): boolean {
    return this.refusal?.cause === 'caller';
  }

  get reason(): FailureReason {
    if (this.kind === 'timeout') return 'timeout';
    if (this.kind === 'rate_limited' || this.kind === 'paced') return 'rate_limited';
    if (this.kind === 'budget_exhausted') return 'budget_exhausted';
    // A network failure (no DNS answer, refused, reset) is this call's failure; `unavailable` is
    // kept for a provider skipped while suspended (or not configured), which it does not say.
    if (this.kind === 'connect' || this.kind === 'network') return 'unreachable';
    if (this.kind === 'not_configured' || this.kind === 'suspended') return 'unavailable';
    return 'error';
  }

  /** This failure as an entry of a response's `unresponsive` list. */
  unresponsive(): Unresponsive {
    return new FailedProvider(this.provider, this.reason, this.kind);
  }
}

/** `app.upstream`: the only way search code reaches an upstream. Caches, records health, classifies failures. */
export interface Upstream {
  /** One task: its (possibly cached) value, or a rejection with an UpstreamError (already recorded). */
  call<T>(task: ProviderTask<T>): Promise<T>;
  /** Runs the tasks concurrently under one deadline; never rejects. Outcomes in task order. */
  gather<T>(tasks: readonly ProviderTask<T>[], options?: GatherOptions): Promise<Gathered<T>[]>;
}

/** A web engine: its request builder and parser, and whether it answers a given query at all. */
export interface WebEngineCalls {
  call(query: WebQuery, config: Config): ProviderCall<EngineSlice>;
  /** Whether the engine is asked for this query (Staan: pages 1-4, short queries). Default: always. */
  accepts?(query: WebQuery): boolean;
}

/**
 * The calls a provider offers to the features that blend several providers.
 * A feature asks the registry for every configured provider offering its
 * call, so a new provider joins a feature by declaring the call here.
 */
export interface ProviderCalls {
  web?: WebEngineCalls;
  /** null when this instance cannot ask (Brave Suggest without its own key). */
  suggest?: (q: string, config: Config) => ProviderCall<string[]> | null;
  /** images, news, videos: null when the provider sits this query out (a page or query its API cannot serve). */
  images?: (query: MediaQuery, config: Config) => ProviderCall<ImageResult[]> | null;
  news?: (query: MediaQuery, config: Config) => ProviderCall<NewsResult[]> | null;
  videos?: (query: MediaQuery, config: Config) => ProviderCall<VideoResult[]> | null;
}

export type ProviderFeature = keyof ProviderCalls;

/**
 * An upstream's published terms: what Sift enforces by default (pacing/plan.ts) when the provider's
 * base URL is one of `hosts`. A self-hosted server, a proxy or a fake gets only what PROVIDER_LIMITS
 * sets and what the upstream itself reports on its answers.
 */
export interface ProviderTerms {
  /** Where the terms are published. */
  source: string;
  /** The upstream's own hosts, which the terms bind. */
  hosts: readonly string[];
  /** At most `limit` calls per `windowSeconds`, spaced evenly. */
  rate?: { limit: number; windowSeconds: number };
  /** At most this many calls in flight at once. */
  concurrency?: number;
  /** Calls per calendar period (UTC); may depend on an optional key. */
  budget?(config: Config): { period: 'month' | 'day'; calls: number } | null;
}

/** What an upstream reports of its limits on an answer (ProviderDescriptor.limitsReport). */
export interface ReportedLimits {
  /** The short window (a second, a minute). */
  rate?: { limit: number; windowSeconds: number; remaining: number; resetSeconds: number };
  /** The long window (a day, a month): the upstream's own count of what is left. */
  period?: { limit: number; remaining: number; resetSeconds: number };
}

/** How a provider reports its limits: read from each answer's headers, and how to pace before the first report. */
export interface LimitsReport {
  /** Where the upstream documents these headers. */
  source: string;
  /** The limits in an answer's rate-limit headers (lower-case names), or null when it reports none. */
  read(headers: Readonly<Record<string, string>>): ReportedLimits | null;
  /** Until the upstream has reported anything: the lowest plan's rate, so a first burst cannot overrun it. */
  untilReported?: { limit: number; windowSeconds: number };
}

/** Everything about one provider, declared once in its adapter folder (`src/providers/<name>/index.ts`). */
export interface ProviderDescriptor {
  slug: ProviderSlug;
  /** Display name (the `name` field of status records). */
  name: string;
  group: ProviderGroup;
  monitor: MonitorKind;
  /** Variables that must all be set for the provider to be configured (none: keyless). */
  requires: readonly (keyof Config)[];
  /** Variables the provider also reads when set (optional credentials). */
  optional?: readonly (keyof Config)[];
  /** The variable(s) holding the provider's base URL. */
  baseUrlVariables: readonly (keyof Config)[];
  /** Query or body parameters that carry a credential (Mojeek's `api_key`): left out of cache keys. */
  credentialParameters?: readonly string[];
  /** Values of its key variables that the upstream documents as public, shared by all (not secrets). */
  publicCredentials?: Partial<Record<keyof Config, string>>;
  /** Default timeout of one call, ms (PROVIDER_TIMEOUT_MS overrides every default). */
  timeoutMs: number;
  /** How long a parsed answer may be reused, ms (the upstream's terms); 0 = never. */
  cacheTtlMs: number;
  calls?: ProviderCalls;
  /** The upstream's published rate, concurrency and budget terms (none: no published hard terms). */
  terms?: ProviderTerms;
  /** The upstream reports its limits on its answers (Brave's and Pixabay's X-RateLimit-* headers). */
  limitsReport?: LimitsReport;
  /** The free active check of a probe-monitored provider (never a paid call). */
  probe?(config: Config): ProviderCall<unknown>;
}

/** Why a provider is not configured on this instance, or null when it is. */
export type NotConfiguredReason = { kind: 'disabled' } | { kind: 'missing'; variables: (keyof Config)[] };

/** `app.providers`: what this instance has configured. */
export interface ProviderDirectory {
  /** Has its key (or is keyless) and is not in DISABLED_PROVIDERS. */
  isConfigured(slug: ProviderSlug): boolean;
  /** Listed in DISABLED_PROVIDERS. */
  isDisabled(slug: ProviderSlug): boolean;
  /** Why the provider is not configured, or null. */
  whyNotConfigured(slug: ProviderSlug): NotConfiguredReason | null;
  /** The provider's timeout in ms (PROVIDER_TIMEOUT_MS overrides every default). */
  timeoutMs(slug: ProviderSlug): number;
  /** The provider's default cache TTL in ms. */
  cacheTtlMs(slug: ProviderSlug): number;
  /** Configured providers, in registry (display) order. */
  configured(): ProviderDescriptor[];
  /** The descriptor of a name, or undefined when it is not a provider slug. */
  get(slug: string): ProviderDescriptor | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    providers: ProviderDirectory;
  }
}
