import { escapeUTF8 as escapeXML } from 'entities';
import type { SearxResponse } from './search.js';

/*
 * SearXNG's two other answer formats, written as its webapp writes them (searx/webapp.py,
 * searx/webutils.py write_csv_response, templates/simple/opensearch_response_rss.xml):
 *
 * - csv: `application/csv`, an attachment named `searx_-_<query>.csv`; the columns title, url,
 *   content, host, engine, score, type; one row per result (type `result`), then the answers,
 *   suggestions (`suggestion`, in title) and corrections (`correction`, in title). Python's csv
 *   module (excel dialect): CRLF line ends, a field quoted only when it holds a comma, a quote or a
 *   line break, quotes doubled. An answer, which SearXNG writes as an object without a title, is
 *   its text in `content` with type `answer` (the type its docstring lists).
 * - rss: `text/xml`, RSS 2.0 with OpenSearch's elements, one item per result (its `pubdate`
 *   as pubDate when it has one). The stylesheet and OpenSearch description SearXNG links are not
 *   served here, so neither is linked; the channel's link is this instance's /search for the query.
 *
 * Errors (a missing q, a bad parameter) stay JSON in every format, as Sift's errors are.
 */

const CSV_COLUMNS = ['title', 'url', 'content', 'host', 'engine', 'score', 'type'] as const;

/** One field as Python's csv.writer (QUOTE_MINIMAL) writes it. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** A number as Python's str() writes a float (`1.0`, `0.5`). */
function pythonFloat(n: unknown): string {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

const hostOf = (url: unknown): string => (typeof url === 'string' && URL.canParse(url) ? new URL(url).host : '');
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export function csvBody(body: SearxResponse): string {
  const rows: string[][] = [[...CSV_COLUMNS]];
  for (const r of body.results) {
    rows.push([
      text(r.title),
      text(r.url),
      text(r.content),
      hostOf(r.url),
      text(r.engine),
      pythonFloat(r.score),
      'result',
    ]);
  }
  for (const a of body.answers) rows.push(['', '', a, '', '', '', 'answer']);
  for (const s of body.suggestions) rows.push([s, '', '', '', '', '', 'suggestion']);
  for (const c of body.corrections) rows.push([c, '', '', '', '', '', 'correction']);
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}

/** The attachment name SearXNG gives, with what a header cannot carry (non-ASCII, quotes, controls) made `_`. */
export function csvDisposition(query: string): string {
  const safe = query.replace(/[^\x20-\x7e]|["\\;]/g, '_').slice(0, 100);
  return `attachment;Filename=searx_-_${safe}.csv`;
}

/** `searchUrl`: this instance's /search, absolute. */
export function rssBody(body: SearxResponse, searchUrl: string): string {
  const q = escapeXML(body.query);
  const items = body.results.map((r) => {
    const pubdate = text(r.pubdate);
    return [
      '    <item>',
      `      <title>${escapeXML(text(r.title))}</title>`,
      '      <type>result</type>',
      `      <link>${escapeXML(text(r.url))}</link>`,
      `      <description>${escapeXML(text(r.content))}</description>`,
      ...(pubdate ? [`      <pubDate>${escapeXML(pubdate)}</pubDate>`] : []),
      '    </item>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0"',
    '     xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"',
    '     xmlns:atom="http://www.w3.org/2005/Atom">',
    '  <channel>',
    `    <title>SearXNG search: ${q}</title>`,
    `    <link>${escapeXML(`${searchUrl}?q=${encodeURIComponent(body.query)}`)}</link>`,
    `    <description>Search results for "${q}" - SearXNG</description>`,
    '    <opensearch:startIndex>1</opensearch:startIndex>',
    `    <opensearch:Query role="request" searchTerms="${q}" startPage="1" />`,
    ...items,
    '  </channel>',
    '</rss>',
    '',
  ].join('\n');
}
