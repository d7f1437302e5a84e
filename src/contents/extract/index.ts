/*
 * Page extraction: fetched HTML, plain text or PDF in, the main content out as Markdown or text,
 * parsed in worker threads. Fetching is not done here; the caller hands over the decoded page.
 */
export { ExtractionFailure, ExtractorBusy } from './errors.js';
export { createExtractor, type Extractor, type ExtractorOptions } from './pool.js';
export { truncateContent } from './truncate.js';
export type { ExtractedPage, ExtractFormat, ExtractInput } from './types.js';
