/*
 * A PDF's text (unpdf, a serverless build of Mozilla's pdf.js): the first MAX_PDF_PAGES pages in
 * order, each page's lines as pdf.js reads them, pages separated by a blank line; the title from
 * the document's metadata. pdf.js is large: a worker loads it with the first PDF it reads, not
 * when it starts.
 */
import type { getDocumentProxy as GetDocumentProxy } from 'unpdf';
import { ExtractionFailure } from './errors.js';
import { isoDate, languageTag } from './metadata.js';
import type { ExtractedPage } from './types.js';

export const MAX_PDF_PAGES = 50;

/** A PDF date (`D:20240131120000+01'00'`) as ISO 8601, or "". */
function pdfDate(value: unknown): string {
  if (typeof value !== 'string') return '';
  const m = /^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?/.exec(value);
  if (!m) return isoDate(value);
  const [, y, mo = '01', d = '01', h, mi = '00', s = '00', zone] = m;
  if (!h) return `${y}-${mo}-${d}`;
  const tz = !zone || zone === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.replace(/'/g, '').slice(3, 5) || '00'}`;
  return isoDate(`${y}-${mo}-${d}T${h}:${mi}:${s}${tz}`);
}

const text = (value: unknown) => (typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '');

export async function extractPdf(bytes: Uint8Array): Promise<ExtractedPage> {
  const { getDocumentProxy, getMeta } = await import('unpdf');
  let pdf: Awaited<ReturnType<typeof GetDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given: a copy keeps the caller's intact.
    pdf = await getDocumentProxy(new Uint8Array(bytes));
  } catch {
    throw new ExtractionFailure('the PDF could not be read');
  }
  try {
    const pages: string[] = [];
    const last = Math.min(pdf.numPages, MAX_PDF_PAGES);
    for (let n = 1; n <= last; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      let out = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        out += item.str;
        if (item.hasEOL) out += '\n';
      }
      const pageText = out
        .split('\n')
        .map((line) => line.replace(/\s+/g, ' ').trim())
        .join('\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim();
      if (pageText) pages.push(pageText);
      page.cleanup();
    }
    const content = pages.join('\n\n');
    if (!content) throw new ExtractionFailure('the PDF has no text');
    const { info } = await getMeta(pdf).catch(() => ({ info: {} as Record<string, unknown> }));
    return {
      title: text(info.Title),
      byline: text(info.Author),
      siteName: '',
      published: pdfDate(info.CreationDate),
      language: languageTag(text(info.Language)),
      excerpt: text(info.Subject),
      canonicalUrl: '',
      content,
    };
  } finally {
    await pdf.loadingTask.destroy();
  }
}
