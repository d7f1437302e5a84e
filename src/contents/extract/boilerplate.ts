/*
 * Boilerplate that pages mark as such. Readability scores text density and already drops blocks
 * whose class or id says comment, sidebar, footer, social or related; what it keeps are blocks
 * marked by element or ARIA role (a cookie banner as role="dialog", a menu as nav), hidden ones,
 * and, inside the article it picked, image captions and lists of links to other pages. Only such
 * general markers are used: removing blocks by class words before Readability chose the article
 * removed whole articles on real pages (a wrapper with "comments" in its class).
 */
import type { DomElement } from './dom.js';

/** Elements and roles that are never the article's running text. */
const NEVER_CONTENT = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'button',
  'select',
  'input',
  'textarea',
  'nav',
  'dialog',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="complementary"]',
  '[role="dialog"]',
  '[role="alertdialog"]',
  '[role="search"]',
  '[role="menu"]',
  '[role="menubar"]',
  '[hidden]',
  '[aria-hidden="true"]',
  '[aria-modal="true"]',
].join(',');

/** Removes what the page itself marks as not content, before the main content is chosen. */
export function removeNeverContent(root: DomElement): void {
  for (const el of Array.from(root.querySelectorAll(NEVER_CONTENT))) el.remove();
  for (const el of Array.from(root.querySelectorAll('[style]'))) {
    if (el.isConnected && isHiddenByStyle(el)) el.remove();
  }
}

function isHiddenByStyle(el: DomElement): boolean {
  const style = el.getAttribute('style') ?? '';
  return /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style);
}

/** Within the chosen content: captions, page furniture and lists of links that Readability keeps. */
export function tidyContent(content: DomElement): void {
  for (const el of Array.from(content.querySelectorAll('figcaption,footer,aside,nav'))) el.remove();
  for (const el of Array.from(content.querySelectorAll('ul,ol'))) {
    if (el.isConnected && isLinkList(el)) el.remove();
  }
}

/** A list whose text is almost all links, each item holding one: a list of other pages, not prose. */
function isLinkList(list: DomElement): boolean {
  const items = Array.from(list.children).filter((c) => c.tagName.toUpperCase() === 'LI');
  if (items.length < 2) return false;
  const text = compactLength(list);
  if (text === 0) return false;
  let linked = 0;
  for (const a of Array.from(list.querySelectorAll('a'))) linked += compactLength(a);
  return linked / text > 0.8 && items.every((li) => li.querySelector('a') !== null);
}

function compactLength(el: DomElement): number {
  return (el.textContent ?? '').replace(/\s+/g, '').length;
}
