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

/** A key as parseKey accepts it (with or without the brand), or any run starting with the brand. */
const KEY_SHAPED = /svc_sk_[A-Za-z0-9_.~-]*|\b[0-9a-f]{8}\.[A-Za-z0-9_-]{16,}/gi;

/** The segment name after which the SearXNG-compatible API's base URL carries the key. */
const KEY_SEGMENT = 'searxng';

/**
 * `text` with its percent-encoded printable ASCII decoded, again and again (a double encoding, `%2573`,
 * becomes `s`): what a key could be spelt in. Other bytes stay encoded, so the result is one printable
 * line and decoding never fails.
 */
function decodeAscii(text: string): string {
  let current = text;
  for (let round = 0; round < 4 && current.includes('%'); round++) {
    const next = current.replace(/%([2-7][0-9A-Fa-f])/g, (whole, hex: string) => {
      const code = Number.parseInt(hex, 16);
      return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : whole;
    });
    if (next === current) break;
    current = next;
  }
  return current;
}

/**
 * The path (anything before the query: an absolute-form target too) with the segment after any
 * `searxng` segment (in any case, after decoding, wherever it is) and every key-shaped token replaced
 * by `[redacted]`. A path with nothing to redact is returned as it came; one with something, decoded.
 */
function redactPath(path: string): string {
  const decoded = decodeAscii(path);
  let found = false;
  const segments = decoded.split(/([/\\])/);
  for (let i = 0; i + 2 < segments.length; i += 2) {
    if (segments[i]!.toLowerCase() !== KEY_SEGMENT || segments[i + 2] === '') continue;
    segments[i + 2] = '[redacted]';
    found = true;
  }
  const redacted = segments.join('').replace(KEY_SHAPED, () => {
    found = true;
    return '[redacted]';
  });
  return found ? redacted : path;
}

/** The query with its key-shaped tokens redacted (decoded then); as it came when it holds none. */
function redactKeyShaped(query: string): string {
  const decoded = decodeAscii(query.replace(/\+/g, ' '));
  KEY_SHAPED.lastIndex = 0;
  if (!KEY_SHAPED.test(decoded)) return query;
  return decoded.replace(KEY_SHAPED, '[redacted]');
}

/** What of a request URL a log line shows. */
export interface UrlLogging {
  /** Keep the query string (secret-bearing parameters and keys still redacted): LOG_QUERIES. Default false. */
  queries?: boolean;
}

/**
 * A request URL as a log line shows it: the path, with the key of a `/searxng/<key>/` base URL and
 * any key-shaped token redacted however it is spelt; the query only with `queries` (what people search
 * for is theirs: LOG_QUERIES), then with the values of secret-bearing parameters and key-shaped
 * tokens redacted.
 */
export function redactUrl(raw: string, logging: UrlLogging = {}): string {
  const q = raw.indexOf('?');
  const path = redactPath(q < 0 ? raw : raw.slice(0, q));
  if (q < 0) return path;
  if (!logging.queries) return path;
  const url = `${path}?${redactKeyShaped(raw.slice(q + 1))}`;
  const at = path.length;
  if (!mayNameSecret(url, at + 1)) return url;
  const query = url
    .slice(at + 1)
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
  return `${path}?${query}`;
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

type LoggerConfig = Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'LOG_FORMAT' | 'LOG_QUERIES'>>;

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

/** The `req` of a request's log lines (its query only with `logging.queries`). */
export function serializeRequest(req: LoggableRequest, logging: UrlLogging = {}) {
  return {
    method: req.method,
    url: redactUrl(req.url, logging),
    host: req.hostname,
    remoteAddress: req.ip,
    userAgent: req.headers['user-agent'],
  };
}

/** pino options of the server's logger (createLogger writes the lines): level, redaction, serializers. */
export function loggerOptions(
  config: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'LOG_QUERIES'>>,
): FastifyServerOptions['logger'] {
  const logging: UrlLogging = { queries: config.LOG_QUERIES ?? false };
  return {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { req: (req: LoggableRequest) => serializeRequest(req, logging) },
  };
}
