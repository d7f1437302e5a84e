/*
 * Why a page could not be read, as the contents endpoints name it (issue 64, item 5). The first
 * two are the caller's URL (a 400); the others are the site's (a 502).
 */

export type ContentsReason =
  | 'invalid_url'
  | 'blocked_address'
  | 'timeout'
  | 'unreachable'
  | 'http_status'
  | 'too_large'
  | 'unsupported_type'
  | 'robots_disallowed'
  | 'too_many_redirects'
  | 'no_content';

/** A page that could not be read: the reason code, a sentence for people, and the site's status for http_status. */
export class ContentsFailure extends Error {
  override name = 'ContentsFailure';
  constructor(
    readonly reason: ContentsReason,
    readonly detail: string,
    readonly status?: number,
  ) {
    super(`${reason}: ${detail}`);
  }
}
