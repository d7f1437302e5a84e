import { ExtractorBusy } from '../contents/extract/index.js';
import type { ContentsFormat, ContentsPage } from '../contents/page.js';
import type { ContentsService } from '../contents/service.js';
import type { ContentsReason } from '../contents/fetch/reasons.js';
import { CONTENTS_MAX_CHARS_DEFAULT } from './queries.js';
import type { WebResult } from './merge.js';

/*
 * Web search with `contents=n`: the pages of the first n results are read at once (the contents
 * service bounds each read by CONTENTS_TIMEOUT_SECONDS, so the answer waits that long at most), and
 * each of those results gets `contents` (the page without `url`) or `contents_error`. Every other
 * result and field is unchanged.
 */

export type PageContents = Omit<ContentsPage, 'url'>;

export interface ContentsError {
  reason: ContentsReason;
  detail: string;
  status?: number;
}

export interface WebSearchResult extends WebResult {
  contents?: PageContents;
  contents_error?: ContentsError;
}

const BUSY_ERROR: ContentsError = { reason: 'timeout', detail: 'every page reader was busy' };

/** How the pages are read (default: markdown, CONTENTS_MAX_CHARS_DEFAULT characters). */
export interface WithContentsOptions {
  format?: ContentsFormat;
  maxChars?: number;
}

/** A result of any search (web, news) with its page's contents or why they were not read. */
export type WithPageContents<R> = R & { contents?: PageContents; contents_error?: ContentsError };

/** The results with the first `n` pages read, and how many of the `n` were not read (their searches go back). */
export async function withContents<R extends { url: string }>(
  results: R[],
  n: number,
  contents: ContentsService,
  options: WithContentsOptions = {},
): Promise<{ results: WithPageContents<R>[]; unread: number }> {
  const first = results.slice(0, n);
  const readOptions = {
    format: options.format ?? 'markdown',
    maxChars: options.maxChars ?? CONTENTS_MAX_CHARS_DEFAULT,
    fresh: false,
  };
  const read = await Promise.all(
    first.map((r) =>
      contents.read(r.url, readOptions).catch((err) => {
        if (err instanceof ExtractorBusy) return null;
        throw err;
      }),
    ),
  );
  let unread = n - first.length;
  const out: WithPageContents<R>[] = results.slice();
  read.forEach((r, i) => {
    const result = first[i]!;
    if (r?.ok) {
      const { url: _asked, ...page } = r.page;
      out[i] = { ...result, contents: page };
      return;
    }
    unread++;
    const error: ContentsError = r
      ? r.failure.status === undefined
        ? { reason: r.failure.reason, detail: r.failure.detail }
        : { reason: r.failure.reason, detail: r.failure.detail, status: r.failure.status }
      : BUSY_ERROR;
    out[i] = { ...result, contents_error: error };
  });
  return { results: out, unread };
}
