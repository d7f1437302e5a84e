import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { monthStart, nextMonthStart } from '../../limits/month.js';
import type { SearchOutcome } from '../../search/outcome.js';

/*
 * What the Tavily door answers besides its 200s, in Tavily's error shape `{"detail": {"error"}}`:
 * the shape its SDKs read (tavily-python raises InvalidAPIKeyError on a 401,
 * UsageLimitExceededError on a 429, ForbiddenError on a 403, BadRequestError on a 400, each with
 * `detail.error` as its message; @tavily/core throws an Error with that message).
 */

export interface Refusal {
  status: 400 | 429 | 502 | 503;
  error: string;
  headers?: Record<string, string>;
}

export const tavilyError = (error: string) => ({ detail: { error } });

export function sendRefusal(reply: FastifyReply, refusal: Refusal) {
  if (refusal.headers) reply.headers(refusal.headers);
  return reply.code(refusal.status).send(tavilyError(refusal.error));
}

/** A search feature's failure (400 for a value an engine refused, 502, 503) as the door's refusal. */
export function refusalOf(outcome: Exclude<SearchOutcome<unknown>, { status: 200 }>): Refusal {
  if (outcome.status === 400) {
    const why = Object.entries(outcome.body)
      .map(([field, message]) => `${field}: ${message}`)
      .join(' ');
    return { status: 400, error: why };
  }
  if (outcome.status === 502) return { status: 502, error: outcome.body.detail };
  return { status: 503, error: outcome.body.detail, ...(outcome.headers ? { headers: outcome.headers } : {}) };
}

/** Reserves the searches a request counts beyond the one reserved with its admission; a refusal when they do not fit. */
export async function reserveRest(
  app: FastifyInstance,
  request: FastifyRequest,
  total: number,
  now: () => number,
): Promise<Refusal | null> {
  const reserved = await app.apiGate.reserve(request, total - 1);
  if (reserved === 'ok') return null;
  if (reserved === 'unavailable') {
    return { status: 503, error: 'The service is temporarily unavailable.', headers: { 'Retry-After': '5' } };
  }
  const at = new Date(now());
  const resets = nextMonthStart(at);
  return {
    status: 429,
    error: `Monthly search quota exhausted: this request needs ${total} searches. It resets on ${monthStart(resets)}.`,
    headers: { 'Retry-After': String(Math.max(1, Math.ceil((resets.getTime() - at.getTime()) / 1000))) },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tavily's `request_id`: the request's own id (the one in Sift's logs) when it is a UUID. */
export function requestIdOf(request: FastifyRequest): string {
  return UUID.test(request.id) ? request.id : randomUUID();
}

/** Tavily's `response_time`: seconds since the request arrived, two decimals. */
export function responseTime(reply: FastifyReply): number {
  return Math.round(reply.elapsedTime / 10) / 100;
}

/** A site's favicon: the one an engine gave, else `/favicon.ico` of the page's origin. */
export function faviconOf(url: string, given = ''): string | null {
  if (given !== '') return given;
  return URL.canParse(url) ? new URL('/favicon.ico', url).href : null;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/**
 * A result's date when Sift knows it as a date: ISO 8601 as an upstream gave it, or the day of an
 * age the engines write as "March 14, 2025" (as `YYYY-MM-DD`); null for a relative age ("2 hours ago").
 */
export function publishedOf(age: string): string | null {
  const trimmed = age.trim();
  if (/^\d{4}-\d{2}-\d{2}/.test(trimmed) && !Number.isNaN(Date.parse(trimmed))) return trimmed;
  const m = /^([A-Za-z]+) (\d{1,2}), (\d{4})$/.exec(age.trim());
  const month = m ? MONTHS.indexOf(m[1]!.toLowerCase()) : -1;
  if (!m || month < 0) return null;
  const day = Number(m[2]);
  const date = new Date(Date.UTC(Number(m[3]), month, day));
  return date.getUTCDate() === day ? date.toISOString().slice(0, 10) : null;
}
