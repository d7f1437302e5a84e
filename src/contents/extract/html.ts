/*
 * The main content of an HTML page: parsed with linkedom (a light DOM, several times cheaper than
 * jsdom), links made absolute, what the page marks as not content removed, the article chosen by
 * Readability, captions and link lists dropped from it, then written as Markdown or plain text.
 * The choice of these libraries and the gain of each cleaning step are measured by bench/contents.ts.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { removeNeverContent, tidyContent } from './boilerplate.js';
import type { DomDocument, DomElement } from './dom.js';
import { ExtractionFailure } from './errors.js';
import { absolutizeLinks, documentBase } from './links.js';
import { htmlToMarkdown } from './markdown.js';
import { isoDate, languageTag, readPageHints } from './metadata.js';
import { elementToText } from './plain-text.js';
import type { ExtractedPage, ExtractFormat } from './types.js';

const clean = (value: string | null | undefined) => (value ?? '').replace(/\s+/g, ' ').trim();

/**
 * linkedom builds the tree as the markup says, without the HTML parser's implied <html> and <body>:
 * a page or fragment without them gets them, so that there is a body to read.
 */
export function withDocumentElements(html: string): string {
  let out = html.replace(/^\s*<!doctype[^>]*>/i, '');
  if (!/<body[\s>]/i.test(out)) {
    const headEnd = /<\/head\s*>/i.exec(out);
    const htmlStart = /<html[^>]*>/i.exec(out);
    const at = headEnd ? headEnd.index + headEnd[0].length : htmlStart ? htmlStart.index + htmlStart[0].length : 0;
    const htmlEnd = /<\/html\s*>/i.exec(out);
    const end = htmlEnd && htmlEnd.index >= at ? htmlEnd.index : out.length;
    out = `${out.slice(0, at)}<body>${out.slice(at, end)}</body>${out.slice(end)}`;
  }
  if (!/<html[\s>]/i.test(out)) out = `<html>${out}</html>`;
  return out;
}

export function extractHtml(html: string, url: string, format: ExtractFormat): ExtractedPage {
  const { document: parsed } = parseHTML(withDocumentElements(html));
  const document = parsed as unknown as DomDocument;
  if (!document.documentElement) throw new ExtractionFailure('the page has no document');
  const base = documentBase(document, url);
  const hints = readPageHints(document, base);
  absolutizeLinks(document, base);
  removeNeverContent(document.documentElement);

  // The serializer hands back the content element itself, so it is not written out and parsed again.
  const article = new Readability(parsed as unknown as ConstructorParameters<typeof Readability>[0], {
    serializer: (node) => node,
    // Kept so that a code block keeps its language-* class, which the Markdown fence names.
    keepClasses: true,
  }).parse();
  const root = article?.content as unknown as DomElement | null | undefined;
  if (!article || !root) throw new ExtractionFailure('no readable content found');
  tidyContent(root);

  const text = elementToText(root);
  if (text.trim() === '') throw new ExtractionFailure('no readable content found');
  return {
    title: clean(article.title),
    byline: clean(article.byline) || hints.byline,
    siteName: clean(article.siteName) || hints.siteName,
    published: isoDate(article.publishedTime) || isoDate(hints.published),
    language: hints.language || languageTag(article.lang),
    excerpt: clean(article.excerpt),
    canonicalUrl: hints.canonicalUrl,
    content: format === 'text' ? text : htmlToMarkdown(root.innerHTML),
  };
}
