/** One page's extraction, by kind: what a worker runs (worker.ts), never the main thread. */
import { ExtractionFailure } from './errors.js';
import { extractHtml } from './html.js';
import { extractPdf } from './pdf.js';
import { extractPlainText } from './plain-input.js';
import type { ExtractedPage, ExtractInput } from './types.js';

export async function extractPage(input: ExtractInput): Promise<ExtractedPage> {
  switch (input.kind) {
    case 'html':
      return extractHtml(input.text ?? '', input.url, input.format);
    case 'text':
      return extractPlainText(input.text ?? '');
    case 'pdf':
      if (!input.bytes) throw new ExtractionFailure('no PDF bytes given');
      return extractPdf(input.bytes);
    default:
      throw new ExtractionFailure('unknown kind of page');
  }
}
