import { answerText } from '../search/instant/answer-text.js';
import type { InstantAnswer } from '../search/instant/types.js';
import { PROVIDERS } from '../providers/registry.js';

/*
 * The short text a model reads next to a tool's structured output (the REST
 * body, unchanged). Plain lines, no markup; long fields are cut; it always
 * says plainly when providers failed, so a model never reads an outage as
 * "nothing matched".
 */

type Json = Record<string, unknown>;

const NAMES = new Map<string, string>(PROVIDERS.map((p) => [p.slug, p.name]));

/** At most this many characters in one rendering (the structured output has everything). */
const MAX_TEXT = 8000;
const SNIPPET = 240;

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const obj = (v: unknown): Json | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;

/** Tags out (the snippets carry highlighting), entities read, whitespace collapsed, cut to `max`. */
export function plain(value: unknown, max = SNIPPET): string {
  const text = str(value)
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, e: string) => ENTITIES[e] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** "provider_02 (Mojeek)". */
export function providerLabel(slug: unknown): string {
  const name = NAMES.get(str(slug));
  return name ? `${str(slug)} (${name})` : str(slug);
}

/** "provider_02 (Mojeek): timeout; provider_03 (Marginalia): error", or "". */
export function failedProviders(unresponsive: unknown): string {
  return arr(unresponsive)
    .map((u) => `${providerLabel(u.engine)}: ${str(u.reason)}`)
    .join('; ');
}

function finish(lines: string[]): string {
  const text = lines.join('\n');
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

/** The line about failed providers of a 200 that still has results from the others. */
function partialFailure(body: Json): string[] {
  const failed = failedProviders(body.unresponsive);
  return failed ? [`Some providers failed, so results may be incomplete: ${failed}.`] : [];
}

function listed(heading: string, body: Json, item: (r: Json) => string[], none = 'No results matched.'): string {
  const results = arr(body.results);
  const lines = [heading];
  if (results.length === 0) {
    lines.push(arr(body.unresponsive).length > 0 ? 'No results (see the failed providers below).' : none);
  }
  results.forEach((r, i) => {
    const [first, ...rest] = item(r);
    lines.push(`${i + 1}. ${first}`, ...rest.filter(Boolean).map((l) => `   ${l}`));
  });
  return finish([...lines, ...partialFailure(body)]);
}

const page = (body: Json) => (typeof body.page === 'number' && body.page > 1 ? `, page ${body.page}` : '');

/** A result's page contents (web search with `contents`), indented under it, or why it was not read. */
function resultContents(r: Json): string {
  const contents = r.contents as Json | undefined;
  if (contents && typeof contents === 'object') {
    const text = str(contents.content).replace(/\n/g, '\n   ');
    return `Page contents${contents.truncated === true ? ' (truncated)' : ''}:\n   ${text}`;
  }
  const error = r.contents_error as Json | undefined;
  return error && typeof error === 'object' ? `Page not read: ${str(error.reason)} (${str(error.detail)})` : '';
}

export function renderWeb(body: Json): string {
  const correction = str(body.correction);
  const text = listed(`Web results for "${str(body.query)}"${page(body)}:`, body, (r) => [
    plain(r.title, 200) || str(r.url),
    str(r.url),
    plain(r.description),
    resultContents(r),
  ]);
  return correction ? `${text}\nDid you mean: "${correction}"?` : text;
}

export function renderPage(body: Json): string {
  const head = [str(body.title) || str(body.final_url), str(body.final_url)];
  const meta = [str(body.byline), str(body.site_name), str(body.published)].filter(Boolean).join(', ');
  if (meta) head.push(meta);
  const cut =
    body.truncated === true
      ? `\n\n[Truncated: ${String(body.length)} characters in all; raise max_chars for more.]`
      : '';
  return `${head.join('\n')}\n\n${str(body.content)}${cut}`;
}

export function renderImages(body: Json): string {
  return listed(`Image results for "${str(body.query)}"${page(body)}:`, body, (r) => [
    plain(r.title, 200) || str(r.url),
    `page: ${str(r.url)}`,
    `image: ${str(r.thumbnail)}`,
  ]);
}

export function renderNews(body: Json): string {
  return listed(`News for "${str(body.query)}"${page(body)}:`, body, (r) => [
    plain(r.title, 200) || str(r.url),
    str(r.url),
    [str(r.source) || str(r.hostname), str(r.age)].filter(Boolean).join(', '),
    plain(r.description),
  ]);
}

export function renderVideos(body: Json): string {
  return listed(`Videos for "${str(body.query)}"${page(body)}:`, body, (r) => [
    plain(r.title, 200) || str(r.url),
    str(r.url),
    [str(r.source) || str(r.hostname), str(r.duration), str(r.age)].filter(Boolean).join(', '),
  ]);
}

export function renderSuggest(body: Json): string {
  const suggestions = Array.isArray(body.suggestions) ? body.suggestions.map(str) : [];
  if (suggestions.length === 0) return `No suggestions for "${str(body.query)}".`;
  return finish([`Suggestions for "${str(body.query)}":`, ...suggestions.map((s) => `- ${s}`)]);
}

export function renderMaps(body: Json): string {
  const places = arr(body.places);
  const query = str(body.query);
  const heading = query ? `Places for "${query}":` : 'Place at these coordinates:';
  if (places.length === 0) return `No place found for "${query}".`;
  const lines = [heading];
  places.forEach((p, i) => {
    lines.push(`${i + 1}. ${plain(p.display_name, 300) || plain(p.name)}`);
    lines.push(`   lat ${str(p.lat)}, lon ${str(p.lon)}${p.type ? ` (${str(p.type)})` : ''}`);
    if (p.osm_url) lines.push(`   ${str(p.osm_url)}`);
  });
  return finish(lines);
}

export function renderTranslate(body: Json): string {
  const detected = str(body.detected_lang);
  const from = detected ? `${detected}, detected` : str(body.source);
  return finish([`Translation (${from} → ${str(body.target)}):`, str(body.translated_text)]);
}

export function renderInstant(body: Json): string {
  const answer = obj(body.answer);
  if (!answer) return `No instant answer for "${str(body.query)}".`;
  // A readable line where the answer has one (its fields stay in structuredContent); the
  // interactive answers (a timer, a QR code) have none, so their fields are listed.
  const line = answerText(answer as unknown as InstantAnswer);
  const { type, query: _query, ...fields } = answer;
  const shown =
    line ??
    Object.entries(fields)
      .filter(([, v]) => typeof v === 'string' || typeof v === 'number')
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join('\n');
  return finish([`Instant answer (${str(type)}) for "${str(body.query)}":`, shown]);
}

export function renderCards(body: Json): string {
  const lines: string[] = [];
  const wikipedia = obj(body.wikipedia);
  if (wikipedia) {
    lines.push(
      `Wikipedia: ${plain(wikipedia.title)}${wikipedia.description ? ` (${plain(wikipedia.description)})` : ''}`,
    );
    lines.push(`   ${plain(wikipedia.extract, 600)}`, `   ${str(wikipedia.url)}`);
  }
  const tvdb = obj(body.thetvdb);
  if (tvdb) {
    lines.push(`TheTVDB: ${plain(tvdb.title)}${tvdb.year ? ` (${str(tvdb.year)})` : ''}, ${str(tvdb.media_type)}`);
    if (tvdb.overview) lines.push(`   ${plain(tvdb.overview, 400)}`);
    lines.push(`   ${str(tvdb.url)}`);
  }
  const trip = obj(body.tripadvisor);
  if (trip) {
    const rating = trip.rating === null || trip.rating === undefined ? '' : `, rated ${str(trip.rating)}/5`;
    lines.push(`Tripadvisor: ${plain(trip.name)}${trip.geo ? `, ${plain(trip.geo)}` : ''}${rating}`);
    if (trip.address) lines.push(`   ${plain(trip.address)}`);
    lines.push(`   ${str(trip.url)}`);
  }
  const se = obj(body.stackexchange);
  if (se) {
    lines.push(`Stack Exchange (${plain(se.site_name)}): ${plain(se.title)} (score ${str(se.score)})`);
    lines.push(`   ${str(se.url)}`);
    const answer = obj(se.answer);
    if (answer) lines.push(`   Top answer${answer.is_accepted ? ' (accepted)' : ''}: ${plain(answer.body, 600)}`);
  }
  const map = obj(body.map);
  const place = map ? obj(map.place) : null;
  if (place) lines.push(`Map: ${plain(place.display_name, 300)} (lat ${str(place.lat)}, lon ${str(place.lon)})`);
  if (lines.length === 0) return `No knowledge card for "${str(body.query)}".`;
  return finish([`Knowledge cards for "${str(body.query)}":`, ...lines]);
}

export function renderStatus(body: Json): string {
  const providers = arr(body.providers);
  if (providers.length === 0) return 'No provider is configured on this instance.';
  const count = (state: string) => providers.filter((p) => p.state === state).length;
  const lines = [
    `Providers: ${count('up')} up, ${count('down')} down, ${count('unknown')} not yet observed.`,
    ...providers.map((p) => {
      const error = p.state === 'down' && p.last_error ? ` (last error: ${plain(p.last_error, 200)})` : '';
      return `- ${str(p.slug)} (${str(p.name)}, ${str(p.group)}): ${str(p.state)}${error}`;
    }),
  ];
  return finish(lines);
}

/**
 * The text of a REST answer other than 200: which providers failed (502),
 * what is not configured (503), which arguments are invalid (400), when to
 * come back (429).
 */
export function renderError(status: number, body: unknown, retryAfter: string | undefined): string {
  const b = obj(body) ?? {};
  const detail = str(b.detail);
  // Throttling and busy messages already say how long to wait; the others get Retry-After spelled out.
  const wait = retryAfter && !/second/.test(detail) ? ` Retry after ${retryAfter} seconds.` : '';
  switch (status) {
    case 400: {
      const fields = Object.entries(b).map(([field, message]) => `${field}: ${str(message)}`);
      return `Invalid arguments. ${fields.join('; ')}`;
    }
    case 502: {
      const failed = failedProviders(b.unresponsive);
      return `${detail || 'The providers failed.'}${failed ? ` Failed providers: ${failed}.` : ''} No results were returned.`;
    }
    case 503:
      return `${detail || 'Service unavailable.'}${wait}`;
    case 429:
      return `${detail || 'Too many requests.'}${wait}`;
    default:
      return `${detail || 'The request failed.'} (HTTP ${status})`;
  }
}
