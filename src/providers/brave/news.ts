import { z } from 'zod';
import type { MediaQuery, NewsResult } from '../../contracts/search.js';
import { body, line, list, nested, text } from '../tolerant.js';
import { isoUtc } from '../dates.js';
import type { ProviderCall } from '../types.js';
import { type BraveMediaConfig, braveMediaCall } from './media.js';

/*
 * Brave news search (provider_01): GET {BRAVE_BASE_URL}/news/search with the
 * parameters of web search (web.ts): q, count=10 (1-50), offset=page-1 (a
 * 0-based page index, 0-9), safesearch=off|strict, search_lang/country
 * (common.ts), freshness from date (Brave's API reference for news search;
 * brave/brave-search-mcp-server src/tools/news/params.ts). Pages past 10 are
 * not asked for (no call, no refusal; the other news provider still answers).
 *
 * Response results[] (Brave's published news sample; the NewsResult type of
 * brave/brave-search-mcp-server src/tools/news/types.ts): title, url,
 * description, age ("2 hours ago"), page_age (ISO, no zone: UTC) as published, thumbnail.src, meta_url.{netloc,
 * hostname} and, for many results, profile.name (the publisher's name). There
 * is no `source` key in Brave's news results: the publisher is profile.name,
 * else the publisher's site, meta_url.hostname (a `source` string is still
 * read first, should Brave send one). Items without a url are dropped.
 */

const item = z.object({
  title: line,
  url: text,
  description: line,
  age: text,
  page_age: text,
  source: line,
  profile: nested({ name: line }),
  thumbnail: nested({ src: text }),
  meta_url: nested({ hostname: text, netloc: text }),
});

const schema = body({ results: list(item) });

export function parseBraveNews(json: unknown): NewsResult[] {
  const out: NewsResult[] = [];
  for (const r of schema.parse(json).results) {
    if (!r.url) continue;
    const hostname = r.meta_url.hostname || r.meta_url.netloc;
    out.push({
      title: r.title,
      url: r.url,
      description: r.description,
      age: r.age,
      published: isoUtc(r.page_age),
      source: r.source || r.profile.name || hostname,
      hostname,
      thumbnail: r.thumbnail.src,
    });
  }
  return out;
}

export function braveNewsCall(query: MediaQuery, config: BraveMediaConfig): ProviderCall<NewsResult[]> | null {
  return braveMediaCall('news', query, config, parseBraveNews);
}
