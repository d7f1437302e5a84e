import dns from 'node:dns';
import { Agent, type Dispatcher } from 'undici';
import { addressPolicy } from './address-policy.js';
import { discard, readBody } from './body.js';
import { deadline } from './deadline.js';
import { classifyBody, decodeText, type PageKind, refuseUnreadableType } from './decode.js';
import { ContentsFailure } from './reasons.js';
import { ROBOTS_MAX_BYTES, robotsRules } from './robots.js';
import { BlockedAddressError, type Lookup, safeConnector } from './safe-connect.js';
import { parseContentsUrl } from './url.js';

/*
 * Fetching one page for its contents, safely (issue 64, item 6), through an undici Agent of its
 * own whose connect step refuses addresses that are not public (safe-connect.ts). In order, under
 * one deadline over the whole fetch (robots.txt, redirects and body):
 *   1. the URL's rules (url.ts);
 *   2. robots.txt of the URL's origin, unless turned off (robots.ts);
 *   3. the request; a redirect is followed by hand, its target going through 1 and 2 again
 *      (at most 5; a 6th is too_many_redirects);
 *   4. a final status other than 2xx is http_status; a type that is never read is refused before
 *      its body is;
 *   5. the body, decoded from gzip/deflate/br and capped while it streams (body.ts);
 *   6. its type (sniffed when the header says none) and text (decode.ts).
 * Every failure is a ContentsFailure; nothing else is ever thrown.
 */

export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ACCEPT = 'text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1';

export interface FetchedPage {
  /** The URL as asked. */
  url: string;
  /** The URL after redirects. */
  finalUrl: string;
  status: number;
  /** HTML and XHTML: html; text/plain: text; application/pdf: pdf. */
  kind: PageKind;
  /** The MIME type, lower case, no parameters. */
  contentType: string;
  /** html and text: the decoded text. */
  text?: string;
  /** pdf: the document. */
  bytes?: Uint8Array;
  fetchedAt: Date;
}

export interface PageFetcher {
  /** Rejects only with a ContentsFailure. */
  fetch(url: string, opts?: { signal?: AbortSignal }): Promise<FetchedPage>;
  close(): Promise<void>;
}

export interface PageFetcherOptions {
  /** CONTENTS_ALLOW_HOSTS: private addresses or CIDRs (each with an optional port) that may be fetched. */
  allowHosts: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  userAgent: string;
  respectRobots: boolean;
  /** The resolver (default: dns.lookup); tests answer with a stub. */
  lookup?: Lookup;
  /** The clock of the robots.txt cache and of fetchedAt (ms). */
  now?: () => number;
  /** How long an origin's robots.txt is kept (default 1 hour). */
  robotsTtlMs?: number;
}

const CONNECTION_FAILURES: Record<string, string> = {
  ENOTFOUND: 'the name does not resolve',
  EAI_AGAIN: 'the name could not be resolved',
  ENODATA: 'the name has no address',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the network',
  UND_ERR_SOCKET: 'the connection was closed',
  UND_ERR_CLOSED: 'the connection was closed',
};

const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Any error of a fetch as the ContentsFailure it means. */
function failureOf(err: unknown, url: URL, signal: AbortSignal): ContentsFailure {
  if (err instanceof ContentsFailure) return err;
  if (signal.aborted && signal.reason instanceof ContentsFailure) return signal.reason;
  const cause = (err as { cause?: unknown })?.cause;
  if (err instanceof BlockedAddressError || cause instanceof BlockedAddressError) {
    return new ContentsFailure('blocked_address', `${url.hostname} resolves to an address that is not public`);
  }
  const code = String((err as { code?: unknown })?.code ?? '');
  if (TIMEOUTS.has(code)) return new ContentsFailure('timeout', `${url.host} did not answer in time`);
  const known = CONNECTION_FAILURES[code];
  if (known) return new ContentsFailure('unreachable', `${url.host}: ${known}`);
  // zlib's codes begin Z_, brotli's ERR__.
  if (code.startsWith('Z_') || code.startsWith('ERR__')) {
    return new ContentsFailure('unreachable', `${url.host}: the body could not be decoded`);
  }
  if (/CERT|TLS|SSL/.test(code)) return new ContentsFailure('unreachable', `${url.host}: TLS failed (${code})`);
  return new ContentsFailure('unreachable', `${url.host}: the connection failed${code ? ` (${code})` : ''}`);
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

export function createPageFetcher(options: PageFetcherOptions): PageFetcher {
  const policy = addressPolicy(options.allowHosts);
  const now = options.now ?? Date.now;
  const agent = new Agent({
    connect: safeConnector({ policy, lookup: options.lookup ?? dns.lookup, timeoutMs: options.timeoutMs }),
    keepAliveTimeout: 4_000,
    // Backstops only: the deadline of each fetch is what bounds it.
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const requestHeaders = {
    accept: ACCEPT,
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': options.userAgent,
  };

  async function exchange(url: URL, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    try {
      return await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: requestHeaders,
        signal,
      });
    } catch (err) {
      throw failureOf(err, url, signal);
    }
  }

  /** The final answer to `start` and its URL, redirects followed and each target checked by `beforeEach`. */
  async function follow(
    start: URL,
    signal: AbortSignal,
    beforeEach?: (url: URL) => Promise<void>,
  ): Promise<{ url: URL; response: Dispatcher.ResponseData }> {
    let url = start;
    for (let redirects = 0; ; redirects++) {
      await beforeEach?.(url);
      const response = await exchange(url, signal);
      if (!REDIRECT_STATUSES.has(response.statusCode)) return { url, response };
      discard(response.body);
      const location = header(response.headers, 'location');
      if (!location) {
        throw new ContentsFailure(
          'http_status',
          `${url.host} answered ${response.statusCode} without a Location`,
          response.statusCode,
        );
      }
      if (redirects === MAX_REDIRECTS) {
        throw new ContentsFailure('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`);
      }
      let target: URL;
      try {
        target = new URL(location, url);
      } catch {
        throw new ContentsFailure('invalid_url', `${url.host} redirected to something that is not a URL`);
      }
      try {
        url = parseContentsUrl(target.href, policy);
      } catch (err) {
        const failure = err as ContentsFailure;
        throw new ContentsFailure(failure.reason, `redirected to ${target.host}: ${failure.detail}`);
      }
    }
  }

  const robots = robotsRules({
    userAgent: options.userAgent,
    timeoutMs: options.timeoutMs,
    ttlMs: options.robotsTtlMs ?? 3_600_000,
    now,
    async fetchRobotsTxt(url, signal) {
      const { url: finalUrl, response } = await follow(url, signal);
      if (response.statusCode < 200 || response.statusCode >= 300) {
        discard(response.body);
        return { status: response.statusCode };
      }
      try {
        const body = await readBody(response.body, header(response.headers, 'content-encoding'), {
          maxBytes: ROBOTS_MAX_BYTES,
          whenOver: 'truncate',
        });
        return { status: response.statusCode, text: new TextDecoder('utf-8').decode(body) };
      } catch (err) {
        throw failureOf(err, finalUrl, signal);
      }
    },
  });

  async function readPage(asked: string, start: URL, signal: AbortSignal): Promise<FetchedPage> {
    const { url, response } = await follow(
      start,
      signal,
      options.respectRobots ? (u) => robots.check(u, signal) : undefined,
    );
    const { statusCode: status, headers, body } = response;
    const contentType = header(headers, 'content-type');
    const contentEncoding = header(headers, 'content-encoding');
    try {
      if (status < 200 || status >= 300) {
        throw new ContentsFailure('http_status', `${url.host} answered ${status}`, status);
      }
      refuseUnreadableType(contentType);
      const declared = Number(header(headers, 'content-length'));
      if (!contentEncoding && declared > options.maxBytes) {
        throw new ContentsFailure('too_large', `the page is larger than ${options.maxBytes} bytes`);
      }
    } catch (err) {
      discard(body);
      throw err;
    }
    let bytes: Buffer;
    try {
      bytes = await readBody(body, contentEncoding, { maxBytes: options.maxBytes, whenOver: 'fail' });
    } catch (err) {
      throw failureOf(err, url, signal);
    }
    const noSniff = header(headers, 'x-content-type-options')?.trim().toLowerCase() === 'nosniff';
    const { kind, contentType: type } = classifyBody(contentType, bytes, noSniff);
    const page: FetchedPage = {
      url: asked,
      finalUrl: url.href,
      status,
      kind,
      contentType: type,
      fetchedAt: new Date(now()),
    };
    if (kind === 'pdf') page.bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else page.text = decodeText(bytes, type, contentType);
    return page;
  }

  return {
    async fetch(raw, opts) {
      const limit = deadline(options.timeoutMs, opts?.signal);
      try {
        const url = parseContentsUrl(raw, policy);
        return await readPage(raw, url, limit.signal);
      } catch (err) {
        throw failureOf(err, new URL('http://unknown.invalid/'), limit.signal);
      } finally {
        limit.clear();
      }
    },
    async close() {
      await agent.close().catch(() => {});
    },
  };
}
