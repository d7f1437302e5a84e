import { HANDLERS } from './registry.js';
import { codePoints, normalise } from './text.js';
import type { InstantAnswer, InstantContext, InstantDeps, InstantHandler, InstantRequest } from './types.js';

/*
 * GET /api/v1/instant/: the stripped query runs through the handlers in
 * order (registry.ts) and the first answer wins. Queries over 280
 * characters get no answer. A handler that throws is skipped and logged,
 * never a 500. Every answer carries its `type` and `query` (the stripped
 * query, unless the handler set one).
 */

export const INSTANT_MAX_QUERY = 280;

export interface InstantResponse {
  query: string;
  answer: InstantAnswer | null;
}

export async function instantAnswer(
  deps: InstantDeps,
  request: InstantRequest,
  handlers: readonly InstantHandler[] = HANDLERS,
): Promise<InstantAnswer | null> {
  const q = request.q.trim();
  if (q === '' || codePoints(q) > INSTANT_MAX_QUERY) return null;
  // Object.assign, not `{ ...request, text, … }`: on Node 20's V8 a spread followed by new keys takes a
  // slow path (about 0.7 µs a key), which cost more than most handlers.
  const ctx: InstantContext = Object.assign({}, request, {
    q,
    text: normalise(q),
    deps,
    now: deps.now?.() ?? new Date(),
  });
  for (const handler of handlers) {
    let fields: Record<string, unknown> | null;
    try {
      // Most handlers answer synchronously: awaiting only a promise saves a microtask per handler.
      const given = handler.answer(ctx);
      fields = given instanceof Promise ? await given : given;
    } catch (err) {
      deps.log?.warn({ err, handler: handler.type }, 'instant answer handler failed; skipped');
      continue;
    }
    if (fields === null || fields === undefined) continue;
    const answer = Object.assign({}, fields, { type: handler.type }) as InstantAnswer;
    if (typeof answer.query !== 'string') answer.query = q;
    return answer;
  }
  return null;
}

export async function instant(deps: InstantDeps, request: InstantRequest): Promise<InstantResponse> {
  return { query: request.q, answer: await instantAnswer(deps, request) };
}
