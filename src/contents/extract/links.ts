/*
 * Links made absolute before extraction, against the page's <base href> (itself resolved against
 * the final URL), so that both formats carry URLs a reader can follow from anywhere. A link that
 * is not http(s) or mailto (javascript:, data:) loses its target and keeps its text.
 */
import type { DomDocument } from './dom.js';

const FOLLOWED = new Set(['http:', 'https:', 'mailto:']);

export function absoluteUrl(href: string, base: string): string | undefined {
  try {
    const url = new URL(href.trim(), base);
    return FOLLOWED.has(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The base links resolve against: the page's <base href> if it has a usable one, else its URL. */
export function documentBase(document: DomDocument, pageUrl: string): string {
  const href = document.querySelector('base[href]')?.getAttribute('href');
  if (!href) return pageUrl;
  const base = absoluteUrl(href, pageUrl);
  return base && !base.startsWith('mailto:') ? base : pageUrl;
}

export function absolutizeLinks(document: DomDocument, base: string): void {
  for (const a of Array.from(document.querySelectorAll('a[href]'))) {
    const url = absoluteUrl(a.getAttribute('href') ?? '', base);
    if (url) a.setAttribute('href', url);
    else a.removeAttribute('href');
  }
}
