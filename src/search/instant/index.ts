import { HANDLERS } from './registry.js';
import { codePoints, normalise } from './text.js';
import type {
  AnswerFields,
  InstantAnswer,
  InstantContext,
  InstantDeps,
  InstantHandler,
  InstantRequest,
} from './types.js';

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

/** A value, or a promise of it: most answers are found without waiting for anything. */
type Eventually<T> = T | Promise<T>;

/**
 * The first handler's answer, or null. Synchronous unless a handler answers with a promise (the
 * currency rates, the weather): awaiting every answer cost the usual request two turns of the
 * microtask queue for nothing.
 */
export function instantAnswer(
  deps: InstantDeps,
  request: InstantRequest,
  handlers: readonly InstantHandler[] = HANDLERS,
): Eventually<InstantAnswer | null> {
  const q = request.q.trim();
  // A string has at least as many UTF-16 units as code points: only a long one needs counting.
  if (q === '' || (q.length > INSTANT_MAX_QUERY && codePoints(q) > INSTANT_MAX_QUERY)) return null;
  const ctx: InstantContext = {
    q,
    lang: request.lang,
    ip: request.ip,
    userAgent: request.userAgent,
    log: request.log,
    text: normalise(q),
    deps,
    now: deps.now?.() ?? new Date(),
  };
  return answerFrom(ctx, handlers, 0);
}

/** The first answer of `handlers` from index `from` on; a handler that throws or rejects is skipped and logged. */
function answerFrom(
  ctx: InstantContext,
  handlers: readonly InstantHandler[],
  from: number,
): Eventually<InstantAnswer | null> {
  for (let i = from; i < handlers.length; i++) {
    const handler = handlers[i]!;
    let given: ReturnType<InstantHandler['answer']>;
    try {
      given = handler.answer(ctx);
    } catch (err) {
      skipped(ctx, handler, err);
      continue;
    }
    if (given instanceof Promise) {
      return given.then(
        (fields) =>
          fields === null || fields === undefined ? answerFrom(ctx, handlers, i + 1) : answerOf(ctx, handler, fields),
        (err: unknown) => {
          skipped(ctx, handler, err);
          return answerFrom(ctx, handlers, i + 1);
        },
      );
    }
    if (given !== null && given !== undefined) return answerOf(ctx, handler, given);
  }
  return null;
}

function skipped(ctx: InstantContext, handler: InstantHandler, err: unknown): void {
  (ctx.log ?? ctx.deps.log)?.warn({ err, handler: handler.type }, 'instant answer handler failed; skipped');
}

function answerOf(ctx: InstantContext, handler: InstantHandler, fields: AnswerFields): InstantAnswer {
  const answer = Object.assign({}, fields, { type: handler.type }) as InstantAnswer;
  if (typeof answer.query !== 'string') answer.query = ctx.q;
  return answer;
}

export function instant(deps: InstantDeps, request: InstantRequest): Eventually<InstantResponse> {
  const answer = instantAnswer(deps, request);
  return answer instanceof Promise
    ? answer.then((found) => ({ query: request.q, answer: found }))
    : { query: request.q, answer };
}
