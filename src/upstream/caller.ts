import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * Who an upstream call is made for: the API gate runs an admitted request's
 * handler inside its caller's context (gate/api-gate.ts), so the runner can
 * hand the user to the pacer (their share of a budget) however deep in a
 * feature the call is made, without every feature passing it along. A call
 * made outside any request (a probe, the CLI, a test) has no caller.
 */

export interface CallerContext {
  readonly userId: number;
  /** Upstream answers that refused the caller's own value: calls the upstream counted, paid for by the caller. */
  refusedCalls: number;
}

const storage = new AsyncLocalStorage<CallerContext>();

/** Runs `fn` (and everything it starts) on behalf of `caller`. */
export function runForCaller<T>(caller: CallerContext, fn: () => T): T {
  return storage.run(caller, fn);
}

/** The caller of the code running now, if it runs for one. */
export function currentCaller(): CallerContext | undefined {
  return storage.getStore();
}
