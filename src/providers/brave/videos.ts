import { z } from 'zod';
import type { Config } from '../../config/index.js';
import type { MediaQuery, VideoResult } from '../../contracts/search.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall } from '../types.js';
import { braveAcceptsQuery, braveHeaders } from './common.js';
import { BRAVE_MEDIA_MAX_PAGE } from './news.js';
import { braveWebParams } from './web.js';

/*
 * Brave video search (provider_01): GET {BRAVE_BASE_URL}/videos/search with
 * the parameters of web search (web.ts): q, count=10, offset=page-1,
 * safesearch=off|strict, search_lang/country, freshness from date. Not asked
 * past page 10 (Brave's offset stops at 9; see news.ts).
 *
 * Response results[]: title, url, age (Brave's text, as is), duration <-
 * video.duration (already "MM:SS" / "HH:MM:SS"), hostname <- meta_url.hostname,
 * thumbnail <- thumbnail.src; source "" (the original names no source for
 * Brave videos). Items without a url are dropped.
 */

const item = z.object({
  title: text,
  url: text,
  age: text,
  video: nested({ duration: text }),
  thumbnail: nested({ src: text }),
  meta_url: nested({ hostname: text }),
});

const schema = body({ results: list(item) });

export type BraveVideosConfig = Pick<Config, 'BRAVE_API_KEY' | 'BRAVE_BASE_URL'>;

export function parseBraveVideos(json: unknown): VideoResult[] {
  const out: VideoResult[] = [];
  for (const r of schema.parse(json).results) {
    if (!r.url) continue;
    out.push({
      title: r.title,
      url: r.url,
      age: r.age,
      source: '',
      duration: r.video.duration,
      hostname: r.meta_url.hostname,
      thumbnail: r.thumbnail.src,
    });
  }
  return out;
}

export function braveVideosCall(query: MediaQuery, config: BraveVideosConfig): ProviderCall<VideoResult[]> | null {
  if (query.page > BRAVE_MEDIA_MAX_PAGE || !braveAcceptsQuery(query.q)) return null;
  return {
    provider: 'provider_01',
    request: {
      method: 'GET',
      url: `${config.BRAVE_BASE_URL}/videos/search?${braveWebParams(query)}`,
      headers: braveHeaders(config.BRAVE_API_KEY),
    },
    parse: parseBraveVideos,
  };
}
