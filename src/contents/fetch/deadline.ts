import { ContentsFailure } from './reasons.js';

/*
 * One deadline over a whole fetch (robots.txt, redirects, body): a signal that aborts with a
 * ContentsFailure saying why, when the time cap passes or the caller's own signal aborts.
 */

export interface Deadline {
  signal: AbortSignal;
  /** Stops the timer and forgets the caller's signal; call once the fetch is over. */
  clear(): void;
}

/** A deadline `timeoutMs` from now; `what` names what was late in the failure's detail. */
export function deadline(timeoutMs: number, callerSignal?: AbortSignal, what = 'the page'): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new ContentsFailure('timeout', `${what} took longer than ${timeoutMs} ms`)),
    timeoutMs,
  );
  const onCallerAbort = () => controller.abort(new ContentsFailure('timeout', 'the fetch was cancelled'));
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}
