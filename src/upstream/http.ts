import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Agent, type Dispatcher, interceptors } from 'undici';
import { oneLine, redactCallerText, redactSecrets, requestSecrets, requestValues } from './redact.js';
import type { FailureKind, UpstreamRequest } from '../providers/types.js';

/*
 * The one HTTP layer for upstream calls (undici). Keep-alive connection pools
 * per origin; one deadline bounding the whole call (connect, headers and
 * body, so a stalled body cannot hang a request); a cap on the body size,
 * also after gzip/brotli decoding; no retries. Every failure is an
 * HttpFailure with a kind and a message that never contains a secret.
 */

export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;
/**
 * The longest upstream URL sent (bytes). Servers refuse longer request lines (414, or 431 when they
 * count the line with the headers) from about 8 KB; a longer URL (a query of 2,000 characters
 * outside ASCII takes up to 24 KB) is refused here, unsent, as such an answer would refuse it: the
 * request's fault, the caller's 400 naming `q` (docs/operations.md), never a provider failure.
 */
export const MAX_UPSTREAM_URL_BYTES = 8000;
/** How much of an error response's body is read to describe the failure. */
const ERROR_SNIPPET_BYTES = 2048;
/** The most a compressed error snippet may decode to. */
const DECODED_SNIPPET_BYTES = 64 * 1024;

export class HttpFailure extends Error {
  override name = 'HttpFailure';
  constructor(
    readonly kind: Exclude<FailureKind, 'not_configured' | 'suspended' | 'refused' | 'paced' | 'budget_exhausted'>,
    message: string,
    readonly status?: number,
    /** Retry-After of a 429 or 503, in ms. */
    readonly retryAfterMs?: number,
    /** The start of a non-2xx answer's body (decoded, secrets removed), for the adapter to read the refusal in it. */
    readonly body?: string,
  ) {
    super(message);
  }
}

export interface HttpResponse {
  status: number;
  /** The decoded body. */
  body: Buffer;
  /** The Content-Type header ('' when absent), to describe a body that is not what was expected. */
  contentType: string;
  /** The answer's rate-limit headers (rateLimitHeaders): what the upstream reports of its limits. */
  limitHeaders?: LimitHeaders;
}

/** Response headers an upstream reports its limits in, lower-case names (`x-ratelimit-limit`, `x-api-quota-left`). */
export type LimitHeaders = Readonly<Record<string, string>>;

const LIMIT_HEADER = /^(x-ratelimit-|ratelimit|x-api-quota-)/;

/** The rate-limit headers of an answer, or undefined when it sent none. */
export function rateLimitHeaders(headers: Record<string, string | string[] | undefined>): LimitHeaders | undefined {
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (!LIMIT_HEADER.test(lower)) continue;
    const value = headers[name];
    out ??= {};
    out[lower] = oneLine(Array.isArray(value) ? value.join(', ') : (value ?? ''), 200);
  }
  return out;
}

export interface HttpRequest extends UpstreamRequest {
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpClientOptions {
  userAgent: string;
  maxBodyBytes?: number;
  /** Configured secrets (API keys) scrubbed from any error text. */
  secrets?: string[];
}

export interface HttpClient {
  /** Resolves with a 2xx response; rejects with an HttpFailure for anything else. */
  request(req: HttpRequest): Promise<HttpResponse>;
  close(): Promise<void>;
}

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const configSecrets = (options.secrets ?? []).filter(Boolean);
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connections: 128,
    pipelining: 1,
    // Backstops only: the per-call deadline below is what bounds a call.
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    connect: { timeout: 30_000 },
  });
  const redirecting: Dispatcher = agent.compose(interceptors.redirect({ maxRedirections: 3 }));
  const baseHeaders = {
    accept: 'application/json',
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': options.userAgent,
  };

  function send(req: HttpRequest): Promise<HttpResponse> {
    let url: URL;
    try {
      url = new URL(req.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    } catch {
      return Promise.reject(new HttpFailure('connect', 'invalid upstream URL'));
    }
    if (url.href.length > MAX_UPSTREAM_URL_BYTES) {
      return Promise.reject(
        new HttpFailure('http_status', `URL longer than ${MAX_UPSTREAM_URL_BYTES} bytes, not sent`, 414),
      );
    }
    let headers: Record<string, string> = baseHeaders;
    if (req.headers) {
      headers = { ...baseHeaders };
      for (const name of Object.keys(req.headers)) headers[name.toLowerCase()] = req.headers[name]!;
    }
    return new Promise<HttpResponse>((resolve, reject) => {
      const call = new UpstreamCall(req, maxBody, configSecrets, resolve, reject);
      if (call.settled) return;
      try {
        (req.followRedirects ? redirecting : agent).dispatch(
          {
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            method: req.method ?? 'GET',
            headers,
            body: req.body,
          },
          call,
        );
      } catch (err) {
        call.onResponseError(null, err as Error);
      }
    });
  }

  return {
    request: send,
    async close() {
      await agent.close().catch(() => {});
    },
  };
}

/**
 * One upstream call, driven by undici's dispatch handler callbacks: no
 * streams, no AbortController; one timer is the deadline over the whole call
 * (queueing, connect, headers and body). The first outcome settles the
 * promise; anything undici reports afterwards is ignored.
 */
class UpstreamCall implements Dispatcher.DispatchHandler {
  settled = false;
  private controller: Dispatcher.DispatchController | null = null;
  private readonly timer: NodeJS.Timeout;
  private status = 0;
  private encoding = '';
  private contentType = '';
  private errorBody = false;
  /** A 429's Retry-After, as sent. */
  private retryAfter = '';
  private limitHeaders: LimitHeaders | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private readonly onCancel: (() => void) | undefined;

  constructor(
    private readonly req: HttpRequest,
    private readonly maxBody: number,
    private readonly configSecrets: string[],
    private readonly resolve: (res: HttpResponse) => void,
    private readonly reject: (err: HttpFailure) => void,
  ) {
    this.timer = setTimeout(onDeadline, Math.max(1, req.timeoutMs), this);
    const signal = req.signal;
    if (signal) {
      if (signal.aborted) {
        this.fail(cancelled(signal.reason));
        return;
      }
      this.onCancel = () => this.fail(cancelled(signal.reason));
      signal.addEventListener('abort', this.onCancel, { once: true });
    }
  }

  /** Settles with `failure` and stops the request (if it started). */
  fail(failure: HttpFailure): void {
    if (this.settled) return;
    this.finish();
    this.controller?.abort(failure);
    this.reject(failure);
  }

  timedOut(): void {
    this.fail(new HttpFailure('timeout', `no complete answer within ${this.req.timeoutMs} ms`));
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.onCancel) this.req.signal?.removeEventListener('abort', this.onCancel);
  }

  /**
   * Text for an error message, with every secret of the configuration and this request removed, and
   * every value the request carried (a caller's query or text, echoed in an upstream's error): the
   * message is recorded as the provider's last error, which every API user may read.
   */
  private clean(text: string): string {
    const secrets = [...this.configSecrets, ...requestSecrets(this.req.url, this.req.headers)];
    const callerText = requestValues(this.req.url, this.req.body);
    return oneLine(redactCallerText(redactSecrets(text, secrets), callerText), 200);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // A call that timed out while it waited for a connection is stopped as soon as it gets one.
    if (this.settled) controller.abort(new HttpFailure('timeout', 'deadline passed before the request was sent'));
    else this.controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (this.settled) return;
    this.status = statusCode;
    this.limitHeaders = rateLimitHeaders(headers);
    if (statusCode < 200 || statusCode > 299) {
      this.errorBody = true;
      const errorEncoding = headers['content-encoding'];
      this.encoding = Array.isArray(errorEncoding) ? errorEncoding.join(',') : (errorEncoding ?? '');
      const retryAfter = headers['retry-after'];
      if ((statusCode === 429 || statusCode === 503) && typeof retryAfter === 'string') {
        this.retryAfter = oneLine(retryAfter, 40);
      }
      return;
    }
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBody) {
      this.controller = controller;
      this.fail(tooLarge(this.maxBody, statusCode));
      return;
    }
    const encoding = headers['content-encoding'];
    this.encoding = Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '');
    const type = headers['content-type'];
    this.contentType = Array.isArray(type) ? (type[0] ?? '') : (type ?? '');
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.errorBody) {
      this.chunks.push(chunk);
      if (this.size >= ERROR_SNIPPET_BYTES) this.failWithStatus();
      return;
    }
    if (this.size > this.maxBody) {
      this.fail(tooLarge(this.maxBody, this.status));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (this.errorBody) {
      this.failWithStatus();
      return;
    }
    this.finish();
    const raw = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    const status = this.status;
    const contentType = this.contentType;
    const limitHeaders = this.limitHeaders;
    const encoding = this.encoding.trim().toLowerCase();
    if (!encoding || encoding === 'identity' || raw.length === 0) {
      this.resolve({ status, body: raw, contentType, limitHeaders });
      return;
    }
    decode(raw, encoding, this.maxBody).then(
      (body) => this.resolve({ status, body, contentType, limitHeaders }),
      (err: HttpFailure) => this.reject(err),
    );
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.settled) return;
    this.fail(classify(err, (text) => this.clean(text)));
  }

  /** A non-2xx answer: fails with its status and the start of its body. */
  private failWithStatus(): void {
    const snippet = readableSnippet(
      decodeSnippet(Buffer.concat(this.chunks).subarray(0, ERROR_SNIPPET_BYTES), this.encoding.trim().toLowerCase()),
    );
    const detail = snippet ? `: ${this.clean(snippet)}` : '';
    const body = snippet
      ? redactSecrets(snippet, [...this.configSecrets, ...requestSecrets(this.req.url, this.req.headers)])
      : undefined;
    const wait = this.retryAfter ? ` (Retry-After: ${this.clean(this.retryAfter)})` : '';
    const retryAfterMs = this.retryAfter ? retryAfterToMs(this.retryAfter) : undefined;
    if (this.status === 429) {
      this.fail(new HttpFailure('rate_limited', `HTTP 429 rate limited${wait}${detail}`, 429, retryAfterMs));
    } else if (this.status === 503 && retryAfterMs !== undefined) {
      this.fail(new HttpFailure('http_status', `HTTP 503${wait}${detail}`, 503, retryAfterMs));
    } else if (this.status >= 300 && this.status <= 399) {
      // A redirect's body says nothing; what matters is that it was not (or no longer) followed.
      const why = this.req.followRedirects ? 'too many redirects' : 'redirect not followed';
      this.fail(new HttpFailure('http_status', `HTTP ${this.status}, ${why}`, this.status));
    } else {
      this.fail(new HttpFailure('http_status', `HTTP ${this.status}${detail}`, this.status, undefined, body));
    }
  }
}

function onDeadline(call: UpstreamCall): void {
  call.timedOut();
}

/** The failure of a call stopped by its signal: the reason given to abort() when it is one (a deadline). */
function cancelled(reason?: unknown): HttpFailure {
  if (reason instanceof HttpFailure) return reason;
  return new HttpFailure('timeout', 'cancelled before the upstream answered');
}

function tooLarge(max: number, status?: number): HttpFailure {
  return new HttpFailure('too_large', `response larger than ${formatBytes(max)}`, status);
}

function classify(err: unknown, clean: (text: string) => string): HttpFailure {
  if (err instanceof HttpFailure) return err;
  const code = String((err as { code?: unknown })?.code ?? '');
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new HttpFailure('timeout', 'connection timed out');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new HttpFailure('timeout', 'upstream stopped answering');
    case 'ECONNREFUSED':
      return new HttpFailure('connect', 'connection refused');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new HttpFailure('network', 'connection closed by upstream before a complete answer');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new HttpFailure('connect', 'upstream host name did not resolve');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new HttpFailure('connect', 'upstream host unreachable');
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'UND_ERR_INFO':
      return new HttpFailure('bad_response', 'malformed HTTP response');
    case 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_INVALID_ARG':
      // undici's redirect handler refuses a Location it already visited with an invalid-argument error.
      if (err instanceof Error && /redirect loop/i.test(err.message)) {
        return new HttpFailure('bad_response', 'redirect loop');
      }
      return new HttpFailure('connect', 'invalid upstream request');
    default: {
      const message = err instanceof Error ? err.message : String(err);
      if (code.startsWith('HPE_')) return new HttpFailure('bad_response', 'malformed HTTP response');
      if (/redirect/i.test(message)) return new HttpFailure('bad_response', 'too many redirects');
      return new HttpFailure('connect', clean(`request failed${code ? ` (${code})` : ''}: ${message}`));
    }
  }
}

/**
 * The start of a compressed error body, decoded as far as it goes (an upstream's refusal, gzipped as
 * every answer is, names the refused parameter); the raw bytes when not compressed or not decodable.
 */
function decodeSnippet(raw: Buffer, enc: string): Buffer {
  if (!enc || enc === 'identity' || raw.length === 0) return raw;
  // Bounded: a few kilobytes in, at most DECODED_SNIPPET_BYTES out (a larger output is refused, not decoded).
  const opts = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: DECODED_SNIPPET_BYTES };
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return zlib.gunzipSync(raw, opts).subarray(0, ERROR_SNIPPET_BYTES * 2);
    if (enc === 'deflate') return zlib.inflateSync(raw, opts).subarray(0, ERROR_SNIPPET_BYTES * 2);
    if (enc === 'br') {
      const brotliOpts = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: DECODED_SNIPPET_BYTES };
      return zlib.brotliDecompressSync(raw, brotliOpts).subarray(0, ERROR_SNIPPET_BYTES * 2);
    }
  } catch {
    // A body that does not decode says nothing readable (readableSnippet drops it).
  }
  return raw;
}

/** The start of an error body as text, or '' when it is compressed or binary (it says nothing readable). */
function readableSnippet(text: Buffer): string {
  if (text.includes(0) || text[0] === 0x1f) return '';
  return text.toString('utf8');
}

/** Decodes a gzip, deflate or brotli body (`enc` is lower-case and trimmed). */
async function decode(raw: Buffer, enc: string, max: number): Promise<Buffer> {
  const opts = { maxOutputLength: max };
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return await gunzip(raw, opts);
    if (enc === 'deflate') return await inflate(raw, opts);
    if (enc === 'br') return await brotli(raw, opts);
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new HttpFailure('too_large', `decoded response larger than ${formatBytes(max)}`);
    }
    throw new HttpFailure('bad_response', `response body could not be decoded (${enc})`);
  }
  throw new HttpFailure('bad_response', `unsupported content encoding "${oneLine(enc, 20)}"`);
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`;
}

/** Retry-After (delta-seconds or an HTTP date) in ms from now; undefined when unreadable or not in the future. */
export function retryAfterToMs(value: string, now = Date.now()): number | undefined {
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) {
    const seconds = Number(text);
    return seconds > 0 ? seconds * 1000 : undefined;
  }
  const at = Date.parse(text);
  if (!Number.isFinite(at) || !/[a-z]/i.test(text)) return undefined;
  return at > now ? at - now : undefined;
}
