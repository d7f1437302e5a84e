import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import pino from 'pino';
import type { FastifyServerOptions } from 'fastify';
import type PinoPretty from 'pino-pretty';
import type { Config } from '../config/index.js';

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY_PARAMS = new Set(['token', 'key', 'api_key', 'apikey', 'api-key', 'password']);

/**
 * Could a parameter name be a secret-bearing one (holding `token`, `key` or `password` in any case,
 * or a percent-encoded character that might spell one)? Only such a query is decoded and rebuilt.
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

/**
 * Writes of at most this many bytes: whole lines each (pino's destination never splits a line
 * below this), so that the lines of the cluster's workers, which share one standard output, never
 * mix on a pipe (POSIX PIPE_BUF on Linux).
 */
const MAX_WRITE_BYTES = 4096;

type LoggerConfig = Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'LOG_FORMAT'>>;

/** LOG_FORMAT resolved for descriptor `fd`: auto is pretty on a terminal, JSON otherwise. */
export function resolveLogFormat(format: Config['LOG_FORMAT'] = 'auto', fd = 1): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  // isatty, not process.stdout.isTTY: the log writes to the descriptor itself, and needs no stream on it.
  return isatty(fd) ? 'pretty' : 'json';
}

/**
 * A pretty line's message: the message, then a URL, and a request's method, path, status and time;
 * the other fields follow it as JSON.
 */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const parts = [String(log[messageKey] ?? '')];
  if (typeof log.url === 'string') parts.push(log.url);
  const req = log.req as { method?: string; url?: string } | undefined;
  if (req?.method) parts.push(`${req.method} ${req.url}`);
  const res = log.res as { statusCode?: number } | undefined;
  if (res?.statusCode !== undefined) parts.push(String(res.statusCode));
  if (typeof log.responseTime === 'number') parts.push(`in ${log.responseTime.toFixed(1)} ms`);
  return parts.join(' ');
}

/**
 * Human-readable lines through pino-pretty's formatter, one synchronous write each: a person
 * reads them as they come, and none is lost when the process exits. Colours only on a terminal.
 */
function prettyDestination(fd: number): pino.DestinationStream {
  // Loaded only here: a server writing JSON never loads it.
  const { prettyFactory, isColorSupported } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const format = prettyFactory({
    colorize: isColorSupported && isatty(fd),
    translateTime: 'SYS:HH:MM:ss.l',
    messageFormat: prettyMessage,
    ignore: 'pid,hostname,url,req,res,responseTime',
    singleLine: true,
  });
  const out = pino.destination({ dest: fd, sync: true });
  return { write: (line: string) => out.write(format(line)) };
}

/**
 * The server's logger, to standard output (or `fd`): pretty lines when LOG_FORMAT says so (auto:
 * on a terminal), else JSON lines through pino's asynchronous destination: lines wait only while a
 * write is under way, and pino writes what is pending when the process exits (`logger.fatal` also
 * writes at once, for a last line before a crash).
 */
export function createLogger(config: LoggerConfig, fd = 1): pino.Logger {
  const options = loggerOptions(config) as pino.LoggerOptions;
  if (resolveLogFormat(config.LOG_FORMAT, fd) === 'pretty') return pino(options, prettyDestination(fd));
  return pino(options, pino.destination({ dest: fd, sync: false, maxWrite: MAX_WRITE_BYTES }));
}

export interface LoggableRequest {
  method: string;
  url: string;
  /** Fastify's Host without its port (X-Forwarded-Host behind a trusted proxy). */
  hostname?: string;
  ip?: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The `req` of a request's log lines. */
export function serializeRequest(req: LoggableRequest) {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.hostname,
    remoteAddress: req.ip,
    userAgent: req.headers['user-agent'],
  };
}

/** pino options of the server's logger (createLogger writes the lines): level, redaction, serializers. */
export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): FastifyServerOptions['logger'] {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { req: serializeRequest },
  };
}
