import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { MediaQuery, VideoResult } from '../../contracts/search.js';
import { earliestFor, MEDIA_LANGUAGES } from '../freshness.js';
import { body, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';

/*
 * Sepia Search, the PeerTube video index (provider_06, keyless):
 * GET {SEPIA_BASE_URL}/search/videos?search=<q>&start=<(page-1)*10>&count=10
 * &sort=-match&nsfw=false (safe search on) | both (off)
 * (+ languageOneOf[]=<lang> for en, fr, de, es, it, pt, nl)
 * (+ startDate=<ISO-8601 UTC, now minus a day/week/30 days/365 days> for date).
 * startDate is rounded down to the minute, so the same dated search within a
 * minute is one upstream request (and one cache entry), not one per millisecond.
 *
 * Response data[]: title <- name, url, hostname <- the third "/"-segment of
 * the url, thumbnail <- thumbnailUrl (previewUrl when absent, as upstreams.md
 * advises), duration <- seconds as "M:SS" or "H:MM:SS" ("" for 0 or missing),
 * age <- publishedAt as "January 05, 2024" (its own calendar date; "" when
 * unparsable), source "PeerTube". Videos without a url are dropped.
 */

export const SEPIA_PER_PAGE = 10;
export const SEPIA_SOURCE = 'PeerTube';

const video = z.object({
  name: text,
  url: text,
  thumbnailUrl: text,
  previewUrl: text,
  duration: text,
  publishedAt: text,
});
const schema = body({ data: list(video) });

export type SepiaConfig = Pick<Config, 'SEPIA_BASE_URL'>;

/** Seconds as "M:SS" or "H:MM:SS"; "" for 0, missing or not a number. */
export function formatDuration(raw: string): string {
  const seconds = Math.trunc(Number(raw.trim() === '' ? Number.NaN : raw));
  if (!Number.isFinite(seconds) || seconds <= 0) return '';
  const secs = seconds % 60;
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return hours > 0 ? `${hours}:${pad(minutes % 60)}:${pad(secs)}` : `${minutes}:${pad(secs)}`;
}

/**
 * English month names, from Intl (no table of our own). Made on first use: the process's first
 * Intl.DateTimeFormat sets up ICU's date formatting, some 60 ms that a start need not wait for.
 */
let monthFormat: Intl.DateTimeFormat | undefined;
const monthName = (date: Date) =>
  (monthFormat ??= new Intl.DateTimeFormat('en-US', { month: 'long', timeZone: 'UTC' })).format(date);

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** An ISO-8601 date(-time) as "Month DD, YYYY" (the calendar date written in it); "" when unparsable. */
export function formatPublished(iso: string): string {
  const m = ISO_DATE_TIME.exec(iso.trim());
  if (!m) return '';
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return '';
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return '';
  return `${monthName(check)} ${String(day).padStart(2, '0')}, ${m[1]}`;
}

/** The host part of a URL as the original takes it: the third "/"-separated segment. */
export function urlSegmentHost(url: string): string {
  return url.split('/')[2] ?? '';
}

export function sepiaParams(query: MediaQuery, now: Date): URLSearchParams {
  const params = new URLSearchParams({
    search: query.q,
    start: String((query.page - 1) * SEPIA_PER_PAGE),
    count: String(SEPIA_PER_PAGE),
    sort: '-match',
    nsfw: query.safe ? 'false' : 'both',
  });
  if (MEDIA_LANGUAGES.has(query.lang)) params.set('languageOneOf[]', query.lang);
  const earliest = earliestFor(query.date, now);
  if (earliest) {
    earliest.setUTCSeconds(0, 0);
    params.set('startDate', earliest.toISOString());
  }
  return params;
}

export function parseSepia(json: unknown): VideoResult[] {
  const out: VideoResult[] = [];
  for (const v of schema.parse(json).data) {
    if (!v.url) continue;
    out.push({
      title: v.name,
      url: v.url,
      age: formatPublished(v.publishedAt),
      source: SEPIA_SOURCE,
      duration: formatDuration(v.duration),
      hostname: urlSegmentHost(v.url),
      thumbnail: v.thumbnailUrl || v.previewUrl,
    });
  }
  return out;
}

export function sepiaVideosCall(
  query: MediaQuery,
  config: SepiaConfig,
  now: Date = new Date(),
): ProviderCall<VideoResult[]> {
  return {
    provider: 'provider_06',
    request: { method: 'GET', url: `${config.SEPIA_BASE_URL}/search/videos?${sepiaParams(query, now)}` },
    parse: parseSepia,
  };
}
