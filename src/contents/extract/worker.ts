/*
 * The entry of an extraction worker thread (piscina loads this file): one page in, its extracted
 * content out. A failure crosses the thread boundary as a plain object, since an Error's class does
 * not survive structured cloning; the pool turns it back into ExtractionFailure.
 */
import { ExtractionFailure } from './errors.js';
import { extractPage } from './extract-page.js';
import type { ExtractedPage, ExtractInput } from './types.js';

export type WorkerAnswer = { ok: true; page: ExtractedPage } | { ok: false; noContent: boolean; message: string };

export default async function extractInWorker(input: ExtractInput): Promise<WorkerAnswer> {
  try {
    return { ok: true, page: await extractPage(input) };
  } catch (err) {
    return {
      ok: false,
      noContent: err instanceof ExtractionFailure,
      message: err instanceof Error ? err.message : String(err),
    };
  }
}
