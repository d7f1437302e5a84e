/*
 * Who an upstream call is made for. The API gate makes one for each admitted request
 * (gate/api-gate.ts); the routes hand the features an upstream bound to it (`app.upstream.for`,
 * routes/feature-deps.ts), so the runner can give the user to the pacer (their share of a budget)
 * and count the calls an upstream refused for the caller's own value. A call made outside any
 * request (a probe, the CLI, a test) has no caller.
 *
 * Passed along, not kept in an AsyncLocalStorage: on Node 20 a store in use makes every promise of
 * the process run a hook, which cost some 6 % of a web search's CPU.
 */

export interface CallerContext {
  readonly userId: number;
  /** Upstream answers that refused the caller's own value: calls the upstream counted, paid for by the caller. */
  refusedCalls: number;
}
