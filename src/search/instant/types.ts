import type { Config } from '../../config/index.js';
import type { Upstream } from '../../providers/types.js';
import type { RatesStore } from './rates-store.js';

/*
 * Shared types of the instant answers: what a handler sees (the context),
 * what it gives back (the answer's own fields; the runner adds `type` and
 * `query`), and how handlers are listed (the registry, in handler order).
 */

/** Plain JSON fields of one answer (no `type`: the runner sets it from the handler). */
export type AnswerFields = Record<string, unknown>;

/** One instant answer as the API returns it. */
export type InstantAnswer = AnswerFields & { type: string; query: string };

export interface InstantLog {
  warn(obj: unknown, msg?: string): void;
}

/** What the handlers may use besides the query: upstreams, stored rates, clocks and randomness. */
export interface InstantDeps {
  config: Config;
  upstream: Upstream;
  rates: RatesStore;
  log?: InstantLog;
  /** The current time (tests fix it). */
  now?: () => Date;
}

/** The request as the handlers see it. */
export interface InstantRequest {
  /** The stripped query. */
  q: string;
  /** `lang` parameter (stripped, lowercased; "" = none). */
  lang: string;
  /** The client's address as the app resolves it (TRUST_PROXY aware); "" when unknown. */
  ip: string;
  userAgent: string;
  /** Where a handler that fails is logged (the request's logger); else `deps.log`. */
  log?: InstantLog;
}

export interface InstantContext extends InstantRequest {
  /** The query normalised for matching: lowercased, single spaces, typographic quotes straightened, no trailing `?`/`!`/`.`. */
  text: string;
  deps: InstantDeps;
  now: Date;
}

export interface InstantHandler {
  /** The answer's `type`. */
  type: string;
  /** The answer's fields, or null when the query is not for this handler. */
  answer(ctx: InstantContext): Promise<AnswerFields | null>;
}
