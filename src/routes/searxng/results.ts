import { decodeHTML } from 'entities';
import type { CardsResponse } from '../../search/cards/index.js';
import type { ImageResult, NewsResult, VideoResult } from '../../contracts/search.js';
import type { Place } from '../../contracts/place.js';
import type { RankedResult } from '../../search/merge.js';
import { RRF_K } from '../../search/merge.js';
import { type FailureReason, FailedProvider, type Unresponsive } from '../../providers/types.js';
import { engineName } from '../../search/engines.js';

/*
 * Sift's answers in SearXNG's JSON shapes (searx/result_types, searx/results.py, webutils.py):
 * every result with the fields of SearXNG's MainResult, infoboxes as its infobox results (its
 * Wikipedia engine's shape), `unresponsive_engines` as `[engine, reason]` pairs sorted by engine.
 * Answers are plain strings: the form the clients read (LangChain returns `answers[0]` as the
 * tool's text, mcp-searxng prints each as a line and drops anything else), as SearXNG sent them
 * before it wrapped them in objects.
 */

type Json = Record<string, unknown>;

/** HTML fragments (Sift's snippets carry `<strong>` highlights) as the plain text SearXNG's `content` is. */
export function plainText(html: string): string {
  if (html === '') return '';
  return decodeHTML(html.replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

/** Python's urlparse 6-tuple, as SearXNG's JSON encoder writes `parsed_url`; null for a URL that does not parse. */
export function parsedUrl(url: string): string[] | null {
  if (!URL.canParse(url)) return null;
  const u = new URL(url);
  return [u.protocol.replace(/:$/, ''), u.host, u.pathname, '', u.search.replace(/^\?/, ''), u.hash.replace(/^#/, '')];
}

/**
 * SearXNG's two dates of a result from Sift's `published` (ISO 8601 UTC, or ""): `publishedDate`
 * as its JSON encoder writes a datetime (isoformat), `pubdate` as its results carry it
 * (`strftime('%Y-%m-%d %H:%M:%S%z')`, what its RSS shows); null and "" without a date.
 */
export function searxDates(published: string): { publishedDate: string | null; pubdate: string } {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})Z$/.exec(published);
  if (!m) return { publishedDate: null, pubdate: '' };
  return { publishedDate: `${m[1]}T${m[2]}+00:00`, pubdate: `${m[1]} ${m[2]}+0000` };
}

/** "1:02:03" or "4:05" in seconds, as SearXNG's JSON writes a video's `length`; null when unknown. */
export function lengthSeconds(duration: string): number | null {
  if (!/^\d+(?::\d{1,2}){0,2}$/.test(duration)) return null;
  return duration.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/** The fields every SearXNG main result has, with their defaults. */
function mainResult(fields: Json & { url: string; engine: string; category: string }): Json {
  // Object.assign, not a spread: the defaults keep SearXNG's field order, the fields override them.
  const defaults: Json = {
    url: fields.url,
    title: '',
    content: '',
    engine: fields.engine,
    template: 'default.html',
    parsed_url: parsedUrl(fields.url),
    img_src: '',
    thumbnail: '',
    priority: '',
    engines: [fields.engine],
    positions: [1],
    score: 1,
    category: fields.category,
    publishedDate: null,
    pubdate: '',
    iframe_src: '',
    audio_src: '',
    length: null,
    views: '',
    author: '',
    metadata: '',
    open_group: false,
    close_group: false,
  };
  return Object.assign(defaults, fields);
}

/**
 * A fused web result. `score` is the reciprocal-rank sum scaled so that a first place in one
 * engine scores 1: like SearXNG's, it grows with the number of engines that found the page.
 */
export function webResult(ranked: RankedResult): Json {
  const { result } = ranked;
  const engines = ranked.engines.map(engineName);
  return mainResult({
    url: result.url,
    title: plainText(result.title),
    content: plainText(result.description),
    engine: engines[0]!,
    engines,
    positions: ranked.ranks.map((r) => r + 1),
    score: Math.round(ranked.score * RRF_K * 1e6) / 1e6,
    category: 'general',
    thumbnail: '',
    ...searxDates(result.published),
  });
}

/** The position-based score of the n-th (0-based) result of one provider's list. */
const listScore = (rank: number) => Math.round((RRF_K / (RRF_K + rank)) * 1e6) / 1e6;

export function imageResult(r: ImageResult, provider: string, rank: number): Json {
  return mainResult({
    url: r.url,
    title: plainText(r.title),
    engine: engineName(provider),
    template: 'images.html',
    img_src: r.thumbnail,
    thumbnail_src: r.thumbnail,
    thumbnail: r.thumbnail,
    resolution: '',
    img_format: '',
    filesize: '',
    source: r.source,
    positions: [rank + 1],
    score: listScore(rank),
    category: 'images',
  });
}

export function newsResult(r: NewsResult, provider: string, rank: number): Json {
  return mainResult({
    url: r.url,
    title: plainText(r.title),
    content: plainText(r.description),
    engine: engineName(provider),
    thumbnail: r.thumbnail,
    img_src: r.thumbnail,
    ...searxDates(r.published),
    metadata: r.source,
    positions: [rank + 1],
    score: listScore(rank),
    category: 'news',
  });
}

/** A video: `iframe_src` is its player page (Perplexica keeps only videos that have one). */
export function videoResult(r: VideoResult, provider: string, rank: number): Json {
  return mainResult({
    url: r.url,
    title: plainText(r.title),
    engine: engineName(provider),
    template: 'videos.html',
    thumbnail: r.thumbnail,
    length: lengthSeconds(r.duration),
    duration: r.duration,
    author: r.source,
    iframe_src: r.embed_url,
    ...searxDates(r.published),
    positions: [rank + 1],
    score: listScore(rank),
    category: 'videos',
  });
}

export function mapResult(place: Place, rank: number): Json {
  return mainResult({
    url: place.osm_url,
    title: place.name || place.display_name,
    content: place.display_name,
    engine: 'openstreetmap',
    template: 'map.html',
    latitude: place.lat,
    longitude: place.lon,
    address: null,
    boundingbox: null,
    geojson: null,
    osm: null,
    positions: [rank + 1],
    score: listScore(rank),
    category: 'map',
  });
}

/** An infobox as SearXNG's engines give one (its LegacyResult fields included). */
function infobox(
  engine: string,
  fields: { infobox: string; id: string; content: string; img_src: string },
  urls: { title: string; url: string }[],
  attributes: { label: string; value: string }[],
): Json {
  return {
    infobox: fields.infobox,
    id: fields.id,
    content: fields.content,
    img_src: fields.img_src || null,
    urls,
    attributes: attributes.filter((a) => a.value !== ''),
    engine,
    engines: [engine],
    url: null,
    template: 'default.html',
    parsed_url: null,
    title: '',
    thumbnail: '',
    priority: '',
    positions: '',
    score: 0,
    category: '',
    publishedDate: null,
  };
}

/** Knowledge cards as infoboxes: the Wikipedia summary first, then the card that fits the query. */
export function infoboxesOf(cards: CardsResponse): Json[] {
  const boxes: Json[] = [];
  const w = cards.wikipedia;
  if (w) {
    boxes.push(
      infobox(
        'wikipedia',
        { infobox: w.title, id: w.url, content: plainText(w.extract), img_src: w.thumbnail },
        [{ title: 'Wikipedia', url: w.url }],
        [{ label: 'Description', value: plainText(w.description) }],
      ),
    );
  }
  const t = cards.thetvdb;
  if (t) {
    boxes.push(
      infobox(
        'thetvdb',
        { infobox: t.title, id: t.url, content: plainText(t.overview), img_src: t.poster },
        [{ title: 'TheTVDB', url: t.url }],
        [
          { label: 'Year', value: t.year },
          { label: 'Type', value: t.media_type === 'movie' ? 'Film' : 'Series' },
          { label: 'Genres', value: t.genres.join(', ') },
          { label: 'Status', value: t.status },
          { label: 'Cast', value: t.cast.map((c) => c.name).join(', ') },
        ],
      ),
    );
  }
  const a = cards.tripadvisor;
  if (a) {
    boxes.push(
      infobox(
        'tripadvisor',
        { infobox: a.name, id: a.url, content: plainText(a.description), img_src: '' },
        [{ title: 'Tripadvisor', url: a.url }],
        [
          { label: 'Address', value: a.address },
          { label: 'Rating', value: a.rating === null ? '' : `${a.rating}/5` },
          { label: 'Reviews', value: a.num_reviews > 0 ? String(a.num_reviews) : '' },
        ],
      ),
    );
  }
  const s = cards.stackexchange;
  if (s) {
    boxes.push(
      infobox(
        'stackexchange',
        { infobox: plainText(s.title), id: s.url, content: s.answer ? plainText(s.answer.body) : '', img_src: '' },
        [{ title: s.site_name, url: s.url }, ...(s.answer ? [{ title: 'Top answer', url: s.answer.url }] : [])],
        [
          { label: 'Score', value: String(s.score) },
          { label: 'Answers', value: String(s.answer_count) },
          { label: 'Tags', value: s.tags.join(', ') },
        ],
      ),
    );
  }
  const m = cards.map;
  if (m) {
    const p = m.place;
    boxes.push(
      infobox(
        'openstreetmap',
        { infobox: p.name || p.display_name, id: p.osm_url, content: p.display_name, img_src: '' },
        [{ title: 'OpenStreetMap', url: p.osm_url }],
        [
          { label: 'Latitude', value: String(p.lat) },
          { label: 'Longitude', value: String(p.lon) },
        ],
      ),
    );
  }
  return boxes;
}

/** SearXNG's texts for why an engine did not answer (webutils.exception_classname_to_text). */
const REASONS: Readonly<Record<FailureReason, string>> = {
  timeout: 'timeout',
  error: 'HTTP error',
  // No connection made (httpx's ConnectError); a broken one reads BROKEN_CONNECTION (below).
  unreachable: 'HTTP connection error',
  rate_limited: 'too many requests',
  unavailable: 'Suspended: too many failures',
  // SearXNG has no word for it: REST's reason, so a spent budget reads the same at every door.
  budget_exhausted: 'budget_exhausted',
};

/** A connection that broke mid-exchange: SearXNG's text for httpx's ReadError and WriteError. */
const BROKEN_CONNECTION = 'network error';

/** `[engine, reason]` pairs, one per engine, sorted by engine name as SearXNG sorts them. */
export function unresponsiveEngines(unresponsive: readonly Unresponsive[]): [string, string][] {
  const byName = new Map<string, string>();
  for (const u of unresponsive) {
    const name = engineName(u.engine);
    if (!byName.has(name))
      byName.set(name, FailedProvider.kindOf(u) === 'network' ? BROKEN_CONNECTION : REASONS[u.reason]);
  }
  return [...byName.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
}
