import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Agent, type Dispatcher, interceptors, request } from 'undici';
import { oneLine, redactSecrets, requestSecrets } from './redact.js';
import type { FailureKind, UpstreamRequest } from './types.js';

/*
 * The one HTTP layer for upstream calls (undici). Keep-alive connection pools
 * per origin; one deadline bounding the whole call (connect, headers and
 * body, so a stalled body cannot hang a request); a cap on the body size,
 * also after gzip/brotli decoding; no retries. Every failure is an
 * HttpFailure with a kind and a message that never contains a secret.
 */

export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;
/** How much of an error response's body is read to describe the failure. */
const ERROR_SNIPPET_BYTES = 2048;

export class HttpFailure extends Error {
  override name = 'HttpFailure';
  constructor(
    readonly kind: Exclude<FailureKind, 'not_configured'>,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** The decoded body. */
  body: Buffer;
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

class Deadline extends Error {}

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

  async function send(req: HttpRequest): Promise<HttpResponse> {
    // Only failures need the request's secrets (to scrub them from the message).
    const clean = (text: string) =>
      oneLine(redactSecrets(text, [...configSecrets, ...requestSecrets(req.url, req.headers)]), 200);

    const controller = new AbortController();
    const deadline = new Deadline();
    const timer = setTimeout(() => controller.abort(deadline), Math.max(1, req.timeoutMs));
    const signal = req.signal ? AbortSignal.any([controller.signal, req.signal]) : controller.signal;

    const headers: Record<string, string> = {
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate, br',
      'user-agent': options.userAgent,
    };
    for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;

    try {
      let url: URL;
      try {
        url = new URL(req.url);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
      } catch {
        throw new HttpFailure('connect', 'invalid upstream URL');
      }
      const res = await request(url, {
        dispatcher: req.followRedirects ? redirecting : agent,
        method: req.method ?? 'GET',
        headers,
        body: req.body,
        signal,
      });

      if (res.statusCode < 200 || res.statusCode > 299) {
        const snippet = await readSnippet(res.body);
        const detail = snippet ? `: ${clean(snippet)}` : '';
        if (res.statusCode === 429) throw new HttpFailure('rate_limited', `HTTP 429 rate limited${detail}`, 429);
        throw new HttpFailure('http_status', `HTTP ${res.statusCode}${detail}`, res.statusCode);
      }

      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBody) {
        res.body.destroy();
        throw new HttpFailure('too_large', `response larger than ${formatBytes(maxBody)}`, res.statusCode);
      }
      const raw = await readCapped(res.body, maxBody);
      if (raw === null)
        throw new HttpFailure('too_large', `response larger than ${formatBytes(maxBody)}`, res.statusCode);
      const body = await decode(raw, String(res.headers['content-encoding'] ?? ''), maxBody);
      return { status: res.statusCode, headers: flatHeaders(res.headers), body };
    } catch (err) {
      throw classify(err, signal, deadline, req, clean);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    request: send,
    async close() {
      await agent.close().catch(() => {});
    },
  };
}

function classify(
  err: unknown,
  signal: AbortSignal,
  deadline: Deadline,
  req: HttpRequest,
  clean: (text: string) => string,
): HttpFailure {
  if (err instanceof HttpFailure) return err;
  if (signal.aborted) {
    if (signal.reason === deadline) return new HttpFailure('timeout', `no complete answer within ${req.timeoutMs} ms`);
    return new HttpFailure('timeout', 'cancelled before the upstream answered');
  }
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
      return new HttpFailure('connect', 'connection closed by upstream before a complete answer');
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
      return new HttpFailure('connect', 'invalid upstream request');
    default: {
      const message = err instanceof Error ? err.message : String(err);
      if (code.startsWith('HPE_')) return new HttpFailure('bad_response', 'malformed HTTP response');
      if (/redirect/i.test(message)) return new HttpFailure('bad_response', 'too many redirects');
      return new HttpFailure('connect', clean(`request failed${code ? ` (${code})` : ''}: ${message}`));
    }
  }
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ERROR_SNIPPET_BYTES) break;
    }
  } catch {
    /* the status is what matters */
  } finally {
    body.destroy();
  }
  const text = Buffer.concat(chunks).subarray(0, ERROR_SNIPPET_BYTES);
  // Compressed or binary error bodies say nothing readable.
  if (text.includes(0) || text[0] === 0x1f) return '';
  return text.toString('utf8');
}

/** The whole body, or null when it exceeds `max` bytes. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

async function decode(raw: Buffer, encoding: string, max: number): Promise<Buffer> {
  const enc = encoding.trim().toLowerCase();
  if (!enc || enc === 'identity' || raw.length === 0) return raw;
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

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / (1024 * 1024))} MB` : `${Math.round(n / 1024)} KB`;
}
