import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { StackExchangeAnswer, StackExchangeQuestion } from '../../contracts/cards.js';
import { body, list, rawList, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { decodeEntities, sanitizeAnswer, visibleLength } from './sanitize.js';
import { STACK_EXCHANGE } from './slug.js';

/*
 * Stack Exchange API 2.3 (provider_12), base STACKEXCHANGE_BASE_URL, optional
 * `key` (STACKEXCHANGE_API_KEY) in the query string; answers always gzip'd.
 *
 * 1. GET /search/advanced?site=<site>&sort=relevance&order=desc&pagesize=5&q=<q>
 *    -> items[]: question_id, title (entity-encoded: decoded here), link,
 *    score, answer_count, view_count, is_answered, tags[].
 * 2. GET /questions/{question_id}/answers?site=<site>&filter=withbody
 *    &sort=votes&order=desc&pagesize=1
 *    -> items[0]: body (HTML: sanitised here), score, is_accepted, link.
 * Errors: {"error_id", "error_name", "error_message"} (HTTP 400 mostly, also
 * accepted in a 200, as a failure).
 *
 * Sources: Stack Exchange API 2.3 documentation (/search/advanced,
 * /questions/{ids}/answers, filters, error handling, always-compressed
 * answers).
 */

export const SEARCH_PAGE_SIZE = 5;
/** Above this many visible characters an answer is "long" (clients collapse it). */
export const LONG_ANSWER_CHARS = 320;
const MAX_TAGS = 5;

export type StackExchangeConfig = Pick<Config, 'STACKEXCHANGE_BASE_URL' | 'STACKEXCHANGE_API_KEY'>;

function rejectError(json: unknown): void {
  if (json !== null && typeof json === 'object' && !Array.isArray(json) && 'error_id' in json) {
    const name = 'error_name' in json ? String(json.error_name) : 'error';
    throw new Error(`API error "${name.slice(0, 60)}"`);
  }
}

const int = z
  .unknown()
  .optional()
  .transform((v) => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0));
const bool = z
  .unknown()
  .optional()
  .transform((v) => v === true);

const questionSchema = z.object({
  question_id: int,
  title: text,
  link: text,
  score: int,
  answer_count: int,
  view_count: int,
  is_answered: bool,
  tags: rawList,
});

const searchSchema = body({ items: list(questionSchema) });

export function parseQuestions(json: unknown): StackExchangeQuestion[] {
  rejectError(json);
  const out: StackExchangeQuestion[] = [];
  for (const q of searchSchema.parse(json).items) {
    if (q.question_id <= 0 || !q.title) continue;
    out.push({
      question_id: q.question_id,
      title: decodeEntities(q.title),
      link: q.link,
      score: q.score,
      answer_count: q.answer_count,
      view_count: q.view_count,
      is_answered: q.is_answered,
      tags: q.tags.filter((t): t is string => typeof t === 'string').slice(0, MAX_TAGS),
    });
  }
  return out;
}

function withKey(params: URLSearchParams, config: StackExchangeConfig): URLSearchParams {
  if (config.STACKEXCHANGE_API_KEY) params.set('key', config.STACKEXCHANGE_API_KEY);
  return params;
}

export function stackExchangeSearchCall(
  q: string,
  site: string,
  config: StackExchangeConfig,
): ProviderCall<StackExchangeQuestion[]> {
  const params = withKey(
    new URLSearchParams({ site, sort: 'relevance', order: 'desc', pagesize: String(SEARCH_PAGE_SIZE), q }),
    config,
  );
  return {
    provider: STACK_EXCHANGE,
    request: { url: `${config.STACKEXCHANGE_BASE_URL}/search/advanced?${params}` },
    parse: parseQuestions,
    cacheTtlMs: 0,
  };
}

const answerSchema = body({
  items: list(z.object({ body: text, score: int, is_accepted: bool, link: text })),
});

/** The top answer (sanitised), or null when the question has none. `questionLink`: its URL when it has no own link. */
export function parseTopAnswer(json: unknown, questionLink: string): StackExchangeAnswer | null {
  rejectError(json);
  const a = answerSchema.parse(json).items[0];
  if (!a) return null;
  const html = sanitizeAnswer(a.body);
  return {
    body: html,
    is_long: visibleLength(html) > LONG_ANSWER_CHARS,
    score: a.score,
    is_accepted: a.is_accepted,
    url: a.link || questionLink,
  };
}

export function stackExchangeAnswerCall(
  question: Pick<StackExchangeQuestion, 'question_id' | 'link'>,
  site: string,
  config: StackExchangeConfig,
): ProviderCall<StackExchangeAnswer | null> {
  const params = withKey(
    new URLSearchParams({ site, filter: 'withbody', sort: 'votes', order: 'desc', pagesize: '1' }),
    config,
  );
  return {
    provider: STACK_EXCHANGE,
    request: { url: `${config.STACKEXCHANGE_BASE_URL}/questions/${question.question_id}/answers?${params}` },
    parse: (json) => parseTopAnswer(json, question.link),
    cacheTtlMs: 0,
  };
}
