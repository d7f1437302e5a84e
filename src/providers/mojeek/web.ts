import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { formatUnixDay, unixIso } from '../dates.js';
import { netloc } from '../netloc.js';
import { body, line, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { MOJEEK } from './slug.js';

/*
 * Mojeek (provider_02): GET {MOJEEK_BASE_URL}/search
 *
 * Request (Mojeek's API documentation, "Request Parameters" page of its
 * search API; the key and result-count parameters as the LangChain Mojeek
 * wrapper and the PyMojeek client send them): q, s (1-based index of the
 * first result: 1, 11, 21, …), t (results per page, default 10), safe
 * (PyMojeek sends safe=0 to turn safe search off; we send 1 or 0), lb with
 * lbb (prefer pages in this language: the language of `lang` as a two-letter
 * code in upper case, like the documentation's ISO codes for rb, with a boost
 * of 1-100; the documentation recommends 10 for the matching region boost,
 * rbb, and we use the same), since (day | month | year | YYYYMMDD: `date` d, m and y are the
 * first three, a week is the date seven days back), fmt=json, api_key. Mojeek
 * ignores parameters it does not know (our former `results` and `language`
 * were two). The URL carries the key, so it must never be logged.
 *
 * Response (Mojeek's "JSON Response Format" page): response.status "OK", or
 * an error text such as "ERROR: Daily Limit Reached" on an HTTP 200 (a
 * failure even so); response.results[] with url, title, desc, and a date
 * when Mojeek gives one (Unix seconds, as the PyMojeek client reads its
 * dates; shown as age "Month DD, YYYY"). Whitespace runs in titles and
 * descriptions become one space.
 */

export const MOJEEK_PAGE_SIZE = 10;
/** lbb: how strongly pages in the requested language are preferred (1-100). */
export const MOJEEK_LANGUAGE_BOOST = 10;

const WEEK_MS = 7 * 24 * 60 * 60_000;

/** `date` as Mojeek's `since`: its own words for a day, a month and a year; a week as the date it starts. */
export function mojeekSince(date: WebQuery['date'], now: Date): string {
  switch (date) {
    case 'd':
      return 'day';
    case 'm':
      return 'month';
    case 'y':
      return 'year';
    case 'w':
      return new Date(now.getTime() - WEEK_MS).toISOString().slice(0, 10).replace(/-/g, '');
    default:
      return '';
  }
}

const schema = body({
  response: nested({
    status: text,
    results: list(z.object({ title: line, url: text, desc: line, date: z.unknown().optional() })),
  }),
});

export class MojeekStatusError extends Error {
  override name = 'MojeekStatusError';
}

export type MojeekConfig = Pick<Config, 'MOJEEK_API_KEY' | 'MOJEEK_BASE_URL'>;

export function mojeekParams(query: WebQuery, apiKey: string, now: Date = new Date()): URLSearchParams {
  const params = new URLSearchParams({
    q: query.q,
    s: String((query.page - 1) * MOJEEK_PAGE_SIZE + 1),
    t: String(MOJEEK_PAGE_SIZE),
    safe: query.safe ? '1' : '0',
  });
  const language = query.lang.toLowerCase().split(/[-_]/)[0] ?? '';
  if (/^[a-z]{2}$/.test(language)) {
    params.set('lb', language.toUpperCase());
    params.set('lbb', String(MOJEEK_LANGUAGE_BOOST));
  }
  const since = mojeekSince(query.date, now);
  if (since) params.set('since', since);
  params.set('fmt', 'json');
  params.set('api_key', apiKey);
  return params;
}

export function parseMojeek(json: unknown): EngineSlice {
  const { response } = schema.parse(json);
  if (response.status !== 'OK') {
    // The status text is Mojeek's own message ("ERROR: Daily Limit Reached"); it never holds the key.
    throw new MojeekStatusError(`Mojeek status: ${response.status.slice(0, 200) || '(missing)'}`);
  }
  const results: EngineResult[] = [];
  for (const r of response.results) {
    if (!r.url) continue;
    results.push({
      title: r.title,
      url: r.url,
      description: r.desc,
      display_url: netloc(r.url),
      favicon_url: '',
      age: formatUnixDay(r.date),
      published: unixIso(r.date),
      sitelinks: [],
    });
  }
  return { results, altered: '' };
}

export function mojeekCall(query: WebQuery, config: MojeekConfig, now: Date = new Date()): ProviderCall<EngineSlice> {
  return {
    provider: MOJEEK,
    request: {
      method: 'GET',
      url: `${config.MOJEEK_BASE_URL}/search?${mojeekParams(query, config.MOJEEK_API_KEY, now)}`,
      headers: { Accept: 'application/json' },
    },
    parse: parseMojeek,
  };
}
