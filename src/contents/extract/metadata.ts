/*
 * What a page says about itself, read before Readability changes the document: its canonical URL,
 * language, and the meta tags Readability does not read. Readability's own metadata (title, byline,
 * site name, excerpt, published time from JSON-LD or article:published_time) is preferred where it
 * has it; these fill the gaps and normalise the formats of the answer.
 */
import type { DomDocument } from './dom.js';
import { absoluteUrl } from './links.js';

export interface PageHints {
  canonicalUrl: string;
  language: string;
  published: string;
  byline: string;
  siteName: string;
}

function meta(document: DomDocument, selector: string): string {
  return document.querySelector(selector)?.getAttribute('content')?.trim() ?? '';
}

export function readPageHints(document: DomDocument, base: string): PageHints {
  const canonical = document.querySelector('link[rel~="canonical"][href]')?.getAttribute('href') ?? '';
  const canonicalUrl = canonical ? (absoluteUrl(canonical, base) ?? '') : '';
  return {
    canonicalUrl: canonicalUrl.startsWith('mailto:') ? '' : canonicalUrl,
    language: languageTag(
      document.documentElement.getAttribute('lang') ??
        document.documentElement.getAttribute('xml:lang') ??
        (meta(document, 'meta[http-equiv="content-language" i]') || meta(document, 'meta[property="og:locale"]')),
    ),
    published:
      meta(document, 'meta[property="article:published_time"]') ||
      meta(document, 'meta[itemprop="datePublished"]') ||
      meta(document, 'meta[name="date"]') ||
      meta(document, 'meta[name="dc.date"]') ||
      (document.querySelector('time[datetime]')?.getAttribute('datetime') ?? ''),
    byline: meta(document, 'meta[name="author"]'),
    siteName: meta(document, 'meta[property="og:site_name"]'),
  };
}

/** A BCP 47 tag in its canonical case (`en_us` → `en-US`), or "" when the value is not one. */
export function languageTag(value: string | null | undefined): string {
  const first = (value ?? '').split(',')[0]?.trim().replace(/_/g, '-') ?? '';
  if (!first) return '';
  try {
    return Intl.getCanonicalLocales(first)[0] ?? '';
  } catch {
    return '';
  }
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date as ISO 8601: kept as written when it already is one, else parsed to UTC; "" when not a date. */
export function isoDate(value: string | null | undefined): string {
  const text = (value ?? '').trim();
  if (!text) return '';
  if (ISO_8601.test(text)) return text.replace(' ', 'T');
  const time = Date.parse(text);
  return Number.isNaN(time) ? '' : new Date(time).toISOString();
}
