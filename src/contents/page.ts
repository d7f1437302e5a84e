import type { ContentsReason } from './fetch/reasons.js';

/*
 * What the contents endpoints answer for one page (GET /api/v1/contents/, each entry of a POST's
 * `results`, and a web result's `contents` without its `url`), and for one page that could not be
 * read (a POST's `failed` entries, a web result's `contents_error`).
 */

export type ContentsFormat = 'markdown' | 'text';

export interface ContentsPage {
  url: string;
  final_url: string;
  canonical_url: string;
  title: string;
  byline: string;
  site_name: string;
  published: string;
  language: string;
  excerpt: string;
  content_type: string;
  format: ContentsFormat;
  content: string;
  length: number;
  truncated: boolean;
  fetched_at: string;
  cached: boolean;
}

export interface ContentsFailureEntry {
  url: string;
  reason: ContentsReason;
  detail: string;
  /** The site's HTTP status, for `http_status`. */
  status?: number;
}

/** The reasons that are the caller's (a 400 for GET); every other one is the site's (a 502). */
export const CALLER_REASONS: ReadonlySet<ContentsReason> = new Set(['invalid_url', 'blocked_address']);
