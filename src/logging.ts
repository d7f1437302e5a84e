import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import pino from 'pino';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from './config/index.js';
import { jsonString } from './json-text.js';
import { BatchedLogSink } from './log-sink.js';

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY_PARAMS = new Set(['token', 'key', 'api_key', 'apikey', 'api-key', 'password']);

/**
 * Could a parameter name be a secret-bearing one (holding `token`, `key` or `password` in any case,
 * or a percent-encoded character that might spell one)? Plain string searches: a regular
 * expression's test cost about 470 instructions a parameter (callgrind), on every request's line.
 */
function mayNameSecretParam(rawName: string): boolean {
  if (rawName.includes('%')) return true;
  const name = rawName.toLowerCase();
  return name.includes('key') || name.includes('token') || name.includes('password');
}

/**
 * Does a parameter of the query starting at `from` have a name that may be secret-bearing? Only the
 * names are looked at: a search like `q=monkey+keys` or one with a percent-encoded character in its
 * text is logged as it came without splitting and decoding the query.
 */
function mayNameSecret(url: string, from: number): boolean {
  let start = from;
  while (start < url.length) {
    let end = url.indexOf('&', start);
    if (end < 0) end = url.length;
    const eq = url.indexOf('=', start);
    if (mayNameSecretParam(url.slice(start, eq >= 0 && eq < end ? eq : end))) return true;
    start = end + 1;
  }
  return false;
}

/** The SearXNG-compatible API's base URL carries the key in the segment after this. */
const KEY_PATH = '/searxng/';

/**
 * Replaces the values of secret-bearing query parameters, and the key of a `/searxng/<key>/` base
 * URL, with `[redacted]`.
 */
export function redactUrl(raw: string): string {
  let url = raw;
  if (url.startsWith(KEY_PATH)) {
    const end = url.slice(KEY_PATH.length).search(/[/?#]/);
    url = `${KEY_PATH}[redacted]${end < 0 ? '' : url.slice(KEY_PATH.length + end)}`;
  }
  const q = url.indexOf('?');
  if (q < 0 || !mayNameSecret(url, q + 1)) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        /* keep raw */
      }
      return SECRET_QUERY_PARAMS.has(name.toLowerCase()) ? `${rawName}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}

/*
 * Header values redacted wherever a log object carries `headers` at its top
 * level. `req` and `res` need no paths: their serializers (below, and
 * Fastify's for `res`) keep no header but the user agent, and pino redacts
 * after serializing, so paths under them only cost time on every request line.
 */
export const REDACTED_PATHS = [
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-monitor-token"]',
  'headers.cookie',
  'headers["set-cookie"]',
];

function prettyTransport(): { target: string } | undefined {
  // isatty, not process.stdout.isTTY: the log writes to the descriptor itself, and needs no stream on it.
  if (!isatty(1)) return undefined;
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return { target: 'pino-pretty' };
  } catch {
    return undefined;
  }
}

/**
 * The server's logger. On a TTY, pretty lines through pino-pretty when it is
 * installed. Otherwise JSON lines to standard output (or `fd`), written in
 * batches (log-sink.ts): what is pending is written synchronously when the
 * process exits, so only a SIGKILL can lose the last few lines.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, fd = 1): pino.Logger {
  const options = loggerOptions(config) as pino.LoggerOptions;
  if (options.transport) return pino(options);
  return pino(options, new BatchedLogSink(fd));
}

/** Writes what the logger holds now (after a line others wait for, like "ready"). */
export function writeLogNow(log: pino.Logger): void {
  const stream = (log as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    // Not a buffered destination, or not open yet: its lines go out on their own.
  }
}

export interface LoggableRequest {
  method: string;
  url: string;
  /** Fastify's Host (X-Forwarded-Host behind a trusted proxy); hostname is it without the port. */
  host?: string;
  hostname?: string;
  ip?: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Fastify's request.hostname from its host, without the array its split makes: every request's
 * log line asks for it.
 */
export function hostnameOf(host: string): string {
  if (host[0] === '[') return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** The host of a request's log lines: Fastify's Host without its port, else its hostname. */
function loggedHost(req: LoggableRequest): string | undefined {
  return typeof req.host === 'string' ? hostnameOf(req.host) : req.hostname;
}

/** The `req` of a request's log lines. */
export function serializeRequest(req: LoggableRequest) {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: loggedHost(req),
    remoteAddress: req.ip,
    userAgent: req.headers['user-agent'],
  };
}

/** `,"<name>":<JSON of a string>`, nothing for undefined, null for anything else (see requestJson). */
function stringMember(name: string, value: unknown): string | null {
  if (value === undefined) return '';
  return typeof value === 'string' ? `,"${name}":${jsonString(value)}` : null;
}

/**
 * JSON.stringify(serializeRequest(req)), the same text, written without the object and the call:
 * every request's completion line has it (request-log-controller.ts). The fields are strings or
 * undefined (left out, as JSON.stringify leaves them out); any other value goes through
 * JSON.stringify. A loop of a million: 200 against 380 ns a request (Node 20).
 */
export function requestJson(req: LoggableRequest): string {
  const { method, url } = req;
  if (typeof method !== 'string' || typeof url !== 'string') return JSON.stringify(serializeRequest(req));
  const host = stringMember('host', loggedHost(req));
  const remoteAddress = stringMember('remoteAddress', req.ip);
  const userAgent = stringMember('userAgent', req.headers['user-agent']);
  if (host === null || remoteAddress === null || userAgent === null) return JSON.stringify(serializeRequest(req));
  return `{"method":${jsonString(method)},"url":${jsonString(redactUrl(url))}${host}${remoteAddress}${userAgent}}`;
}

/** pino options for Fastify: JSON to stdout (pretty on a TTY), secrets redacted. */
export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): FastifyServerOptions['logger'] {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    transport: prettyTransport(),
    // The function itself: the completion line recognises it and writes its JSON directly (requestJson).
    serializers: { req: serializeRequest },
  };
}
