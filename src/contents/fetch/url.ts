import { isIP } from 'node:net';
import type { AddressPolicy } from './address-policy.js';
import { ContentsFailure } from './reasons.js';

/*
 * The URL rules of the contents endpoints (issue 64, item 5), applied to the caller's URL and to
 * every redirect target. WHATWG URL parsing turns every spelling of an IPv4 address (2130706433,
 * 0177.0.0.1, 0x7f.0.0.1, 127.1) into its dotted form and IPv6 into its compressed form, so a
 * literal address is checked here in one form. Names are checked when they are resolved, at
 * connect time (safe-connect.ts).
 */

export const MAX_URL_LENGTH = 2048;

/** The port a connection to `url` goes to. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** `raw` as an absolute http(s) URL that may be fetched; throws a ContentsFailure (invalid_url, blocked_address). */
export function parseContentsUrl(raw: string, policy: AddressPolicy): URL {
  if (typeof raw !== 'string') throw new ContentsFailure('invalid_url', 'the URL must be a string');
  if (raw.trim() === '') throw new ContentsFailure('invalid_url', 'the URL is empty');
  if (raw.length > MAX_URL_LENGTH) {
    throw new ContentsFailure('invalid_url', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ContentsFailure('invalid_url', 'not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ContentsFailure('invalid_url', `the scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ContentsFailure('invalid_url', 'the URL must not carry credentials');
  }
  if (url.href.length > MAX_URL_LENGTH) {
    throw new ContentsFailure('invalid_url', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0 && !policy.isAllowed(host, portOf(url))) {
    throw new ContentsFailure('blocked_address', `${url.hostname} is not a public address`);
  }
  return url;
}
