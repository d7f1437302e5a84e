import { z } from 'zod';
import type { MediaQuery, VideoResult } from '../../contracts/search.js';
import { body, line, list, nested, text } from '../tolerant.js';
import { isoUtc } from '../dates.js';
import { embedUrlOf } from '../embed.js';
import type { ProviderCall } from '../types.js';
import { type BraveMediaConfig, braveMediaCall } from './media.js';

/*
 * Brave video search (provider_01): GET {BRAVE_BASE_URL}/videos/search with
 * the parameters of web search (web.ts): q, count=10 (1-50), offset=page-1
 * (0-9), safesearch=off|strict, search_lang/country (common.ts), freshness
 * from date (Brave's API reference for video search;
 * brave/brave-search-mcp-server src/tools/videos/params.ts). Not asked past
 * page 10.
 *
 * Response results[] (Brave's published video sample; the VideoResult type of
 * brave/brave-search-mcp-server src/tools/videos/types.ts): title, url, age
 * (Brave's text, as is), video.duration (already "MM:SS" / "HH:MM:SS"),
 * video.publisher (the platform: "YouTube") and video.creator (the channel),
 * thumbnail.src, meta_url.hostname. source <- video.publisher, else
 * video.creator. published <- page_age (ISO, no zone: UTC); embed_url <- the
 * platform's player for a YouTube, Vimeo or Dailymotion watch URL (../embed.ts).
 * Items without a url are dropped.
 */

const item = z.object({
  title: line,
  url: text,
  age: text,
  page_age: text,
  video: nested({ duration: text, publisher: line, creator: line }),
  thumbnail: nested({ src: text }),
  meta_url: nested({ hostname: text, netloc: text }),
});

const schema = body({ results: list(item) });

export function parseBraveVideos(json: unknown): VideoResult[] {
  const out: VideoResult[] = [];
  for (const r of schema.parse(json).results) {
    if (!r.url) continue;
    out.push({
      title: r.title,
      url: r.url,
      age: r.age,
      published: isoUtc(r.page_age),
      source: r.video.publisher || r.video.creator,
      duration: r.video.duration,
      hostname: r.meta_url.hostname || r.meta_url.netloc,
      thumbnail: r.thumbnail.src,
      embed_url: embedUrlOf(r.url),
    });
  }
  return out;
}

export function braveVideosCall(query: MediaQuery, config: BraveMediaConfig): ProviderCall<VideoResult[]> | null {
  return braveMediaCall('videos', query, config, parseBraveVideos);
}
