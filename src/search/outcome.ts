import { describeNotConfigured, descriptorOf } from '../providers/registry.js';
import { refusalErrors, unresponsiveOf } from '../upstream/runner.js';
import type { Gathered, ProviderDirectory, ProviderSlug, Unresponsive } from '../providers/types.js';

/*
 * What a search feature hands its route: 200 with the body, 400 when no
 * provider answered and one refused a value the caller gave (naming the
 * parameter), 502 when every provider asked failed (so an outage never reads
 * as "nothing matched"), or 503 when no provider in the request's scope is
 * configured on this instance, naming what is missing.
 */

export type SearchOutcome<B> =
  | { status: 200; body: B }
  | { status: 400; body: Record<string, string> }
  | { status: 502; body: { detail: string; unresponsive: Unresponsive[] } }
  | { status: 503; body: { detail: string }; headers?: Record<string, string> };

export const ALL_FAILED_DETAIL = 'All search providers failed.';

export function allFailed(unresponsive: Unresponsive[]): SearchOutcome<never> {
  return { status: 502, body: { detail: ALL_FAILED_DETAIL, unresponsive } };
}

/**
 * The outcome of a gather in which no provider answered: 400 naming the caller's parameters that
 * an upstream refused, else 502 with the failures.
 */
export function noAnswer(outcomes: readonly Gathered<unknown>[]): SearchOutcome<never> {
  const refused = refusalErrors(outcomes);
  return refused ? { status: 400, body: refused } : allFailed(unresponsiveOf(outcomes));
}

/** The 503 for a scope with no configured provider: "No <what> is configured on this instance: …". */
export function notConfigured(
  providers: ProviderDirectory,
  scope: readonly ProviderSlug[],
  what: string,
): SearchOutcome<never> {
  const reasons = scope.map((slug) => {
    const why = providers.whyNotConfigured(slug) ?? { kind: 'missing' as const, variables: [] };
    return describeNotConfigured(descriptorOf(slug), why);
  });
  return { status: 503, body: { detail: `No ${what} is configured on this instance: ${reasons.join('; ')}.` } };
}
