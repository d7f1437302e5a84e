import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { MediaQuery, NewsResult } from '../../contracts/search.js';
import { isoUtc } from '../dates.js';
import { earliestFor, MEDIA_LANGUAGES } from '../freshness.js';
import { primaryLanguage } from '../language.js';
import { body, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { WORLD_NEWS } from './slug.js';

/*
 * World News API (provider_07): GET {WORLDNEWS_BASE_URL}/search-news with the
 * key in the `x-api-key` header; text=<q>, number=10, offset=(page-1)*10,
 * sort=publish-time, sort-direction=DESC (+ language=<lang> for en, fr, de,
 * es, it, pt, nl) (+ earliest-publish-date=<"YYYY-MM-DD HH:MM:SS" UTC, now
 * minus a day/week/30 days/365 days> for date). Never cached (its terms grant
 * no caching), so relative ages are computed fresh on every answer.
 *
 * Response news[]: title, url, description <- summary, else text; hostname <-
 * the url's host without a leading "www."; thumbnail <- image; source
 * "World News API"; published <- publish_date as ISO 8601 UTC; age <- publish_date ("YYYY-MM-DD HH:MM:SS", taken as UTC;
 * an ISO "T" and "Z" are tolerated) as relative English text, the original's
 * wording exactly: "N years ago" (> 365 days), "N months ago" (days / 30,
 * > 30 days), "N days ago" (> 0 days), "N hours ago" (> 3600 s), "N minutes
 * ago" (> 60 s), else "just now" (also for a date in the future); "" when
 * unparsable. Articles without a url are dropped.
 *
 * Sources: World News API documentation (Search News: parameter names
 * hyphenated over HTTP, as its generated SDKs write them with underscores; the
 * news[] fields).
 */

export const WORLDNEWS_PER_PAGE = 10;
export const WORLDNEWS_SOURCE = 'World News API';

const article = z.object({
  title: text,
  url: text,
  summary: text,
  text: text,
  image: text,
  publish_date: text,
});
const schema = body({ news: list(article) });

export type WorldNewsConfig = Pick<Config, 'WORLDNEWS_API_KEY' | 'WORLDNEWS_BASE_URL'>;

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM:SS` in UTC. */
export function worldNewsDate(d: Date): string {
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

const PUBLISH_DATE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** publish_date as epoch ms (UTC), or null when unparsable. */
export function parsePublishDate(raw: string): number | null {
  const cleaned = raw.trim().replaceAll('Z', '').replaceAll('T', ' ').slice(0, 19);
  const m = PUBLISH_DATE.exec(cleaned);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (h > 23 || mi > 59 || s > 59) return null;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  return ms;
}

/** The relative age of a publish_date at `now`. */
export function relativeAge(publishDate: string, now: number): string {
  const published = parsePublishDate(publishDate);
  if (published === null) return '';
  const total = Math.floor((now - published) / 1000);
  if (total < 0) return 'just now';
  const days = Math.floor(total / 86_400);
  const seconds = total - days * 86_400;
  if (days > 365) return `${Math.floor(days / 365)} years ago`;
  if (days > 30) return `${Math.floor(days / 30)} months ago`;
  if (days > 0) return `${days} days ago`;
  if (seconds > 3600) return `${Math.floor(seconds / 3600)} hours ago`;
  if (seconds > 60) return `${Math.floor(seconds / 60)} minutes ago`;
  return 'just now';
}

/** The host of a URL without a leading "www." ("" when the URL does not parse). */
export function bareHostname(url: string): string {
  if (!URL.canParse(url)) return '';
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host.startsWith('www.') ? host.slice(4) : host;
}

export function worldNewsParams(query: MediaQuery, now: Date): URLSearchParams {
  const params = new URLSearchParams({
    text: query.q,
    number: String(WORLDNEWS_PER_PAGE),
    offset: String((query.page - 1) * WORLDNEWS_PER_PAGE),
    sort: 'publish-time',
    'sort-direction': 'DESC',
  });
  const language = primaryLanguage(query.lang);
  if (MEDIA_LANGUAGES.has(language)) params.set('language', language);
  const earliest = earliestFor(query.date, now);
  if (earliest) params.set('earliest-publish-date', worldNewsDate(earliest));
  return params;
}

export function parseWorldNews(json: unknown, now: number = Date.now()): NewsResult[] {
  const out: NewsResult[] = [];
  for (const a of schema.parse(json).news) {
    if (!a.url) continue;
    out.push({
      title: a.title,
      url: a.url,
      description: a.summary || a.text,
      age: relativeAge(a.publish_date, now),
      published: isoUtc(a.publish_date),
      source: WORLDNEWS_SOURCE,
      hostname: bareHostname(a.url),
      thumbnail: a.image,
    });
  }
  return out;
}

export function worldNewsCall(
  query: MediaQuery,
  config: WorldNewsConfig,
  now: Date = new Date(),
): ProviderCall<NewsResult[]> {
  return {
    provider: WORLD_NEWS,
    request: {
      method: 'GET',
      url: `${config.WORLDNEWS_BASE_URL}/search-news?${worldNewsParams(query, now)}`,
      headers: { Accept: 'application/json', 'x-api-key': config.WORLDNEWS_API_KEY },
    },
    parse: (json) => parseWorldNews(json),
  };
}
