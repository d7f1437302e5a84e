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

/** The first handler's answer, or null; a handler that throws or rejects is skipped and logged. */
export async function instantAnswer(
  deps: InstantDeps,
  request: InstantRequest,
  handlers: readonly InstantHandler[] = HANDLERS,
): Promise<InstantAnswer | null> {
  const q = request.q.trim();
  if (q === '' || codePoints(q) > INSTANT_MAX_QUERY) return null;
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
  for (const handler of handlers) {
    let fields: AnswerFields | null;
    try {
      fields = await handler.answer(ctx);
    } catch (err) {
      skipped(ctx, handler, err);
      continue;
    }
    if (fields !== null) return answerOf(ctx, handler, fields);
  }
  return null;
}

function skipped(ctx: InstantContext, handler: InstantHandler, err: unknown): void {
  (ctx.log ?? ctx.deps.log)?.warn({ err, handler: handler.type }, 'instant answer handler failed; skipped');
}

function answerOf(ctx: InstantContext, handler: InstantHandler, fields: AnswerFields): InstantAnswer {
  const answer = { ...fields, type: handler.type } as InstantAnswer;
  if (typeof answer.query !== 'string') answer.query = ctx.q;
  return answer;
}

export async function instant(deps: InstantDeps, request: InstantRequest): Promise<InstantResponse> {
  return { query: request.q, answer: await instantAnswer(deps, request) };
}
