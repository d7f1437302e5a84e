import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { EngineResult, EngineSlice, WebQuery } from '../../contracts/search.js';
import { netloc } from '../netloc.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';

/*
 * Mojeek (provider_02): GET {MOJEEK_BASE_URL}/search?q=&results=10&s=<1-based
 * first result>&language=<LANG>&fmt=json&api_key=<key>. No safe-search or
 * date mapping. Mojeek reports errors in the body: a response.status other
 * than "OK" (e.g. "ERROR: Daily Limit Reached") is a failure even on HTTP 200.
 * The URL carries the key, so it must never be logged.
 */

export const MOJEEK_PAGE_SIZE = 10;

const schema = body({
  response: nested({
    status: text,
    results: list(z.object({ title: text, url: text, desc: text })),
  }),
});

export class MojeekStatusError extends Error {
  override name = 'MojeekStatusError';
}

export type MojeekConfig = Pick<Config, 'MOJEEK_API_KEY' | 'MOJEEK_BASE_URL'>;

export function mojeekParams(query: WebQuery, apiKey: string): URLSearchParams {
  const params = new URLSearchParams({
    q: query.q,
    results: String(MOJEEK_PAGE_SIZE),
    s: String((query.page - 1) * MOJEEK_PAGE_SIZE + 1),
  });
  if (query.lang) params.set('language', query.lang.toUpperCase());
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
      age: '',
      sitelinks: [],
    });
  }
  return { results, altered: '' };
}

export function mojeekCall(query: WebQuery, config: MojeekConfig): ProviderCall<EngineSlice> {
  return {
    provider: 'provider_02',
    request: {
      method: 'GET',
      url: `${config.MOJEEK_BASE_URL}/search?${mojeekParams(query, config.MOJEEK_API_KEY)}`,
      headers: { Accept: 'application/json' },
    },
    parse: parseMojeek,
  };
}
