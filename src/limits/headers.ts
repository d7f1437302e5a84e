import type { Rate } from '../config/index.js';
import type { RateDecision, WindowState } from './admission.js';

/*
 * Rate-limit headers in the form of the IETF httpapi draft "RateLimit header
 * fields for HTTP" (structured fields, one item per policy):
 *
 *   RateLimit-Policy: "burst";q=60;w=60, "sustained";q=5000;w=86400
 *   RateLimit: "burst";r=59;t=60
 *
 * RateLimit-Policy lists both policies (q = quota, w = window in seconds).
 * RateLimit reports only the most constraining one: a refused request names
 * the exceeded window with the longest wait; otherwise the window with the
 * fewest requests remaining (on a tie, the one that frees a slot later).
 * r = requests remaining; t = whole seconds until the window admits again
 * (when refused: the same value as Retry-After; otherwise: until the oldest
 * request in the window leaves it, i.e. until r next grows).
 */

export function rateLimitPolicy(limits: { burst: Rate; sustained: Rate }): string {
  return `"burst";q=${limits.burst.limit};w=${limits.burst.windowSeconds}, "sustained";q=${limits.sustained.limit};w=${limits.sustained.windowSeconds}`;
}

export function rateLimitHeader(decision: RateDecision): string {
  const [name, window] = mostConstraining(decision);
  const t = decision.admitted ? Math.ceil(window.resetSeconds) : retryAfterSeconds(decision);
  return `"${name}";r=${window.remaining};t=${Math.max(0, t)}`;
}

/** Whole seconds a refused request must wait (the longest wait among exceeded windows), at least 1. */
export function retryAfterSeconds(decision: RateDecision): number {
  const waits = [decision.burst, decision.sustained].filter((w) => w.exceeded).map((w) => w.resetSeconds);
  return Math.max(1, Math.ceil(Math.max(0, ...waits)));
}

/** The 429 message, worded as Django REST Framework does. */
export function throttledDetail(seconds: number): string {
  return `Request was throttled. Expected available in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`;
}

function mostConstraining(decision: RateDecision): ['burst' | 'sustained', WindowState] {
  const { burst, sustained } = decision;
  if (!decision.admitted) {
    if (burst.exceeded && sustained.exceeded) {
      return sustained.resetSeconds > burst.resetSeconds ? ['sustained', sustained] : ['burst', burst];
    }
    return sustained.exceeded ? ['sustained', sustained] : ['burst', burst];
  }
  if (sustained.remaining < burst.remaining) return ['sustained', sustained];
  if (sustained.remaining === burst.remaining && sustained.resetSeconds > burst.resetSeconds) {
    return ['sustained', sustained];
  }
  return ['burst', burst];
}
