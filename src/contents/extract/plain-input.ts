/*
 * A text/plain page: its own lines, trailing spaces and runs of blank lines trimmed; it has no
 * markup, so the same text serves both formats.
 */
import { ExtractionFailure } from './errors.js';
import type { ExtractedPage } from './types.js';

export function extractPlainText(source: string): ExtractedPage {
  const content = source
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (!content) throw new ExtractionFailure('the page is empty');
  return { title: '', byline: '', siteName: '', published: '', language: '', excerpt: '', canonicalUrl: '', content };
}
