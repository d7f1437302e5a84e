import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';
import pino from 'pino';
import { isPrintableAscii, jsonString } from './json-text.js';
import { type LoggableRequest, requestJson, serializeRequest } from './logging.js';

/*
 * The app's request log lines. Apart from logging.ts so that a cluster
 * primary, which serves no request, does not load Fastify to log.
 */

/** Monitor polling is frequent and uninteresting: its request lines go to debug. */
function isMonitorPoll(url: string): boolean {
  return url.startsWith('/status/health');
}

type LogFn = FastifyBaseLogger['info'];
/** pino's loggers can say whether a level is on; other loggers Fastify accepts may not. */
type MaybeLevelAware = { isLevelEnabled?: (level: string) => boolean };

/**
 * A request's logger (`request.log`), made only when something logs through
 * it: a pino child per request costs about as much as the whole log line, and
 * most requests log nothing but that line, which the controller below writes
 * through the parent with the same bindings (the same bytes a child writes).
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    readonly parent: FastifyBaseLogger,
    readonly bindingsOf: Bindings,
  ) {}

  /** The pino child, made on first use. */
  get made(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindingsOf);
    return this.#child;
  }

  /** One line at `level`, with the request's bindings first, without making the child when it is not made yet. */
  line(level: 'info' | 'debug' | 'error', obj: Record<string, unknown>, msg: string): void {
    if (this.#child) this.#child[level](obj, msg);
    else if ((this.parent as MaybeLevelAware).isLevelEnabled?.(level) !== false) {
      this.parent[level](Object.assign({}, this.bindingsOf, obj), msg);
    }
  }

  /** The completion line of a request (fields as SiftLogController gives them), through writeCompletedLine when it can. */
  completed(level: 'info' | 'debug', fields: CompletedFields, msg: string): void {
    if (this.#child || (this.parent as MaybeLevelAware).isLevelEnabled?.(level) === false) {
      this.line(level, fields, msg);
    } else if (!writeCompletedLine(this.parent, level, this.bindingsOf, fields, msg)) {
      this.parent[level](Object.assign({}, this.bindingsOf, fields), msg);
    }
  }

  get level(): string {
    return (this.#child ?? this.parent).level;
  }
  set level(level: string) {
    this.made.level = level;
  }
  // Methods on the prototype, not arrow fields: nothing made per request but the object itself.
  fatal(...args: unknown[]): void {
    this.made.fatal(...(args as Parameters<LogFn>));
  }
  error(...args: unknown[]): void {
    this.made.error(...(args as Parameters<LogFn>));
  }
  warn(...args: unknown[]): void {
    this.made.warn(...(args as Parameters<LogFn>));
  }
  info(...args: unknown[]): void {
    this.made.info(...(args as Parameters<LogFn>));
  }
  debug(...args: unknown[]): void {
    this.made.debug(...(args as Parameters<LogFn>));
  }
  trace(...args: unknown[]): void {
    this.made.trace(...(args as Parameters<LogFn>));
  }
  silent(...args: unknown[]): void {
    this.made.silent(...(args as Parameters<LogFn>));
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made.child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a lazy request logger, unless the route
 * asks for its own level or serializers (then the child at once, as Fastify
 * makes it).
 */
export function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings);
}

/** The fields of a request's completion line, in the line's order. */
// A type, not an interface: it is also a Record<string, unknown> for the lines pino writes.
export type CompletedFields = {
  req: unknown;
  res: { statusCode: number };
  responseTime: number;
};

type Level = 'info' | 'debug';
/** pino's own fields on a logger (`pino.symbols`: its documented hooks into its internals). */
type PinoInternals = Record<symbol, unknown>;
const S = pino.symbols;
/** The mark of a stream that takes each line's level and object too (pino.multistream). */
const NEEDS_METADATA = Symbol.for('pino.metadata');
/** pino.symbols.msgPrefixSym (not in pino's types). */
const MSG_PREFIX = (S as unknown as Record<string, symbol>).msgPrefixSym!;

/** The line's own keys after the bindings. */
const FIELD_KEYS = ['req', 'res', 'responseTime', 'msg'];
/** Keys whose value pino would write some other way than the plain JSON written below. */
const OWN_KEYS = ['reqId', ...FIELD_KEYS];

/**
 * Does this logger write a line as pino does by default, so that writeCompletedLine may write it?
 * Not with any option that changes a line: a mixin, a logMethod or streamWrite hook, a log
 * formatter, a nested key, a message prefix, a message key of its own, a stringifier (a redacted
 * path) or serializer for one of the line's fields but `req` and `res` (whose serializers are
 * applied below), or a stream that takes metadata. Asked once per logger.
 */
const plain = new WeakMap<object, boolean>();
function isPlainPino(logger: FastifyBaseLogger): boolean {
  let known = plain.get(logger);
  if (known === undefined) {
    const p = logger as unknown as PinoInternals;
    const hooks = p[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
    const formatters = p[S.formattersSym] as { log?: unknown } | undefined;
    const stringifiers = (p[S.stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
    const serializers = (p[S.serializersSym] ?? {}) as Record<string, unknown>;
    const stream = p[S.streamSym] as Record<symbol, unknown> | undefined;
    known =
      typeof p[S.asJsonSym] === 'function' &&
      typeof p[S.timeSym] === 'function' &&
      typeof p[S.chindingsSym] === 'string' &&
      typeof (stream as { write?: unknown } | undefined)?.write === 'function' &&
      stream?.[NEEDS_METADATA] !== true &&
      !p[S.mixinSym] &&
      !hooks?.logMethod &&
      !hooks?.streamWrite &&
      !formatters?.log &&
      !p[S.nestedKeySym] &&
      typeof p[MSG_PREFIX] !== 'string' &&
      p[S.messageKeySym] === 'msg' &&
      !stringifiers[S.wildcardFirstSym] &&
      OWN_KEYS.every((key) => !stringifiers[key]) &&
      OWN_KEYS.every((key) => key === 'req' || key === 'res' || !serializers[key]);
    plain.set(logger, known);
  }
  return known;
}

/**
 * JSON.stringify(res) for the `res` of a completion line: Fastify's serializer gives `{ statusCode }`
 * alone, written here in a template (18 against 180 ns); anything else through JSON.stringify.
 */
function resJson(res: unknown): string | undefined {
  if (typeof res === 'object' && res !== null && Object.getPrototypeOf(res) === Object.prototype) {
    const { statusCode } = res as { statusCode?: unknown };
    if (Number.isInteger(statusCode) && Object.keys(res).length === 1) return `{"statusCode":${statusCode as number}}`;
  }
  return JSON.stringify(res);
}

/**
 * Writes a request's completion line as `logger[level]({...bindings, ...fields}, msg)` would, byte
 * for byte, or returns false. Built here because pino's general path (a loop over the fields,
 * looking up serializers and stringifiers for each) cost about 2–3 µs a request in the server:
 * `BENCH_ONLY=instant npm run bench` measured 0.044–0.047 CPU ms a request with this line against
 * 0.047–0.051 through pino.
 */
export function writeCompletedLine(
  logger: FastifyBaseLogger,
  level: Level,
  bindings: Bindings,
  fields: CompletedFields,
  msg: string,
): boolean {
  if (!isPlainPino(logger)) return false;
  const p = logger as unknown as PinoInternals;
  let line = `${(p[S.lsCacheSym] as Record<number, string>)[(logger as unknown as pino.Logger).levels.values[level]!]}${(p[S.timeSym] as () => string)()}${p[S.chindingsSym] as string}`;
  for (const key in bindings) {
    const value = (bindings as Record<string, unknown>)[key];
    // A binding named like one of the fields would come twice: pino's line is left to pino.
    if (typeof value !== 'string' || !isPrintableAscii(value) || FIELD_KEYS.includes(key)) return false;
    line += `,${jsonString(key)}:${jsonString(value)}`;
  }
  const serializers = p[S.serializersSym] as Record<string, ((value: unknown) => unknown) | undefined>;
  const res = serializers.res ? serializers.res(fields.res) : fields.res;
  // pino leaves out a field whose value is undefined, and writes a number that is not finite as null.
  if (serializers.req === serializeRequest) line += `,"req":${requestJson(fields.req as LoggableRequest)}`;
  else {
    const req = serializers.req ? serializers.req(fields.req) : fields.req;
    if (req !== undefined) line += `,"req":${JSON.stringify(req)}`;
  }
  if (res !== undefined) line += `,"res":${resJson(res)}`;
  line += `,"responseTime":${Number.isFinite(fields.responseTime) ? fields.responseTime : null}`;
  line += `,"msg":${jsonString(msg)}${p[S.endSym] as string}`;
  (p[S.streamSym] as { write(line: string): unknown }).write(line);
  return true;
}

/** A request's line: through a lazy logger without making its child, else as any logger writes it. */
function requestLine(
  log: FastifyBaseLogger,
  level: 'info' | 'debug' | 'error',
  obj: Record<string, unknown>,
  msg: string,
): void {
  if (log instanceof LazyRequestLogger) log.line(level, obj, msg);
  else log[level](obj, msg);
}

/**
 * One log line per request, at completion (method, redacted URL, status,
 * time), instead of Fastify's two; the incoming line only at debug.
 */
export class SiftLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    requestLine(request.log, 'debug', { req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const fields: CompletedFields = {
      req: request,
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
    };
    if (error) {
      requestLine(reply.log, 'error', Object.assign({}, fields, { err: error }), 'request errored');
      return;
    }
    const level = isMonitorPoll(request.url) ? 'debug' : 'info';
    if (reply.log instanceof LazyRequestLogger) reply.log.completed(level, fields, 'request completed');
    else reply.log[level](fields, 'request completed');
  }
}
