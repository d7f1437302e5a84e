import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { MediaQuery, VideoResult } from '../../contracts/search.js';
import { formatPublished, isoUtc } from '../dates.js';
import { earliestFor, MEDIA_LANGUAGES } from '../freshness.js';
import { primaryLanguage } from '../language.js';
import { body, line, list, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { SEPIA } from './slug.js';

/*
 * Sepia Search, the PeerTube video index (provider_06, keyless):
 * GET {SEPIA_BASE_URL}/search/videos?search=<q>&start=<(page-1)*10>&count=10
 * &sort=-match&nsfw=false (safe search on) | both (off)
 * (+ languageOneOf[]=<lang> for en, fr, de, es, it, pt, nl)
 * (+ startDate=<ISO-8601 UTC, now minus a day/week/30 days/365 days> for date).
 * startDate is rounded down to the minute, so the same dated search within a
 * minute is one upstream request (and one cache entry), not one per millisecond.
 *
 * Response data[] (PeerTube's REST API reference, VideosSearch /
 * Video; SearXNG's peertube/sepiasearch engine reads the same fields): title
 * <- name, url, hostname <- the third "/"-segment of the url, thumbnail <-
 * thumbnailUrl, else previewUrl, else thumbnailPath or previewPath: a plain
 * PeerTube instance (which SEPIA_BASE_URL may point at) sends only these
 * paths, relative to its own origin ("/lazy-static/thumbnails/…"), so they
 * are joined to the origin of SEPIA_BASE_URL; duration <- seconds as "M:SS"
 * or "H:MM:SS" ("" for 0 or missing), age <- publishedAt as "January 05,
 * 2024" (its own calendar date; "" when unparsable), source "PeerTube".
 * Whitespace runs in titles become one space. A video without a url gets the
 * instance's watch page of its uuid ({origin}/videos/watch/<uuid>, PeerTube's
 * own route); one with neither is dropped. published <- publishedAt as ISO 8601
 * UTC; embed_url <- embedUrl (SearXNG's peertube engine takes it as iframe_src),
 * else {origin of the url}/videos/embed/<uuid>, PeerTube's embed route.
 */

export { formatPublished };

export const SEPIA_PER_PAGE = 10;
export const SEPIA_SOURCE = 'PeerTube';

const video = z.object({
  name: line,
  url: text,
  uuid: text,
  thumbnailUrl: text,
  previewUrl: text,
  thumbnailPath: text,
  previewPath: text,
  duration: text,
  publishedAt: text,
  embedUrl: text,
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
  const language = primaryLanguage(query.lang);
  if (MEDIA_LANGUAGES.has(language)) params.set('languageOneOf[]', language);
  const earliest = earliestFor(query.date, now);
  if (earliest) {
    earliest.setUTCSeconds(0, 0);
    params.set('startDate', earliest.toISOString());
  }
  return params;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The origin of a base URL ('' when it is not an http(s) URL). */
function originOf(baseUrl: string): string {
  try {
    const u = new URL(baseUrl);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : '';
  } catch {
    return '';
  }
}

/** A path an instance sends relative to itself, as an absolute URL on `origin` ('' without either). */
export function joinToOrigin(origin: string, path: string): string {
  if (!path) return '';
  if (/^https?:\/\//i.test(path)) return path;
  if (!origin || !path.startsWith('/') || path.startsWith('//')) return '';
  return `${origin}${path}`;
}

/** `baseUrl` is SEPIA_BASE_URL: relative thumbnail paths are resolved against its origin. */
export function parseSepia(json: unknown, baseUrl = ''): VideoResult[] {
  const out: VideoResult[] = [];
  let origin: string | undefined;
  for (const v of schema.parse(json).data) {
    let url = v.url;
    if (!url && UUID.test(v.uuid)) {
      origin ??= originOf(baseUrl);
      url = origin ? `${origin}/videos/watch/${v.uuid}` : '';
    }
    if (!url) continue;
    let thumbnail = v.thumbnailUrl || v.previewUrl;
    if (!thumbnail && (v.thumbnailPath || v.previewPath)) {
      origin ??= originOf(baseUrl);
      thumbnail = joinToOrigin(origin, v.thumbnailPath) || joinToOrigin(origin, v.previewPath);
    }
    // PeerTube's own player page; an instance that omits it serves one for every uuid.
    let embedUrl = /^https?:\/\//i.test(v.embedUrl) ? v.embedUrl : '';
    if (!embedUrl && UUID.test(v.uuid)) {
      origin ??= originOf(baseUrl);
      const host = URL.canParse(url) ? new URL(url).origin : origin;
      embedUrl = host ? `${host}/videos/embed/${v.uuid}` : '';
    }
    out.push({
      title: v.name,
      url,
      age: formatPublished(v.publishedAt),
      published: isoUtc(v.publishedAt),
      source: SEPIA_SOURCE,
      duration: formatDuration(v.duration),
      hostname: urlSegmentHost(url),
      thumbnail,
      embed_url: embedUrl,
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
    provider: SEPIA,
    request: { method: 'GET', url: `${config.SEPIA_BASE_URL}/search/videos?${sepiaParams(query, now)}` },
    parse: (json) => parseSepia(json, config.SEPIA_BASE_URL),
  };
}
