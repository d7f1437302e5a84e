import { createRequire } from 'node:module';
import type sanitizeHtml from 'sanitize-html';

/*
 * Stack Exchange answer bodies are HTML written by anyone: before one leaves
 * Sift it is cut down to a formatting allowlist (code blocks, lists, emphasis,
 * headings, quotes, tables, links). Every attribute goes, except an `href`
 * that is an absolute http(s) URL, on <a> only (opened in a new tab, no
 * referrer, nofollow). Other tags lose their markup but keep their text;
 * <script>, <style> and the like lose their content too.
 */

const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'pre',
  'code',
  'kbd',
  'samp',
  'var',
  'b',
  'strong',
  'i',
  'em',
  'u',
  's',
  'del',
  'ins',
  'mark',
  'sub',
  'sup',
  'small',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'blockquote',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'a',
];

const HTTP_URL = /^https?:\/\/[^\s]/i;

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: { a: ['href', 'target', 'rel'] },
  allowedSchemes: ['http', 'https'],
  allowedSchemesByTag: {},
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: [
    'script',
    'style',
    'textarea',
    'option',
    'noscript',
    'template',
    'title',
    'iframe',
    'object',
    'svg',
    'math',
  ],
  enforceHtmlBoundary: false,
  parseStyleAttributes: false,
  transformTags: {
    a(tagName, attribs): sanitizeHtml.Tag {
      const href = (attribs.href ?? '').trim();
      if (!HTTP_URL.test(href)) return { tagName, attribs: {} };
      return { tagName, attribs: { href, target: '_blank', rel: 'noopener noreferrer nofollow' } };
    },
  },
};

/*
 * sanitize-html (and the HTML parser under it) takes about 50 ms to load, a
 * ninth of the server's start: it is loaded by the first answer that needs it,
 * or by loadSanitizer() once the server listens (app.ts).
 */
const require = createRequire(import.meta.url);
let sanitizer: typeof sanitizeHtml | undefined;

export function loadSanitizer(): typeof sanitizeHtml {
  sanitizer ??= require('sanitize-html') as typeof sanitizeHtml;
  return sanitizer;
}

/** The answer body reduced to the allowlist above. */
export function sanitizeAnswer(html: string): string {
  return loadSanitizer()(html, OPTIONS).trim();
}

const NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '\u2013',
  mdash: '\u2014',
  hellip: '\u2026',
  lsquo: '\u2018',
  rsquo: '\u2019',
  ldquo: '\u201c',
  rdquo: '\u201d',
  laquo: '\u00ab',
  raquo: '\u00bb',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  times: '\u00d7',
  middot: '\u00b7',
  bull: '\u2022',
  deg: '\u00b0',
  euro: '\u20ac',
};

/** Decodes HTML character references (Stack Exchange titles arrive entity-encoded). Unknown names are kept. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});/g, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code =
        ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return Object.hasOwn(NAMED, ref) ? NAMED[ref]! : whole;
  });
}

/** How many characters a reader sees: the text without its tags, references decoded. */
export function visibleLength(html: string): number {
  return [...decodeEntities(html.replace(/<[^>]*>/g, ''))].length;
}
