import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

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
    const line: Record<string, unknown> = {
      req: request,
      res: { statusCode: reply.statusCode },
      responseTime: reply.elapsedTime,
    };
    let level: 'info' | 'debug' | 'error' = 'info';
    let msg = 'request completed';
    if (error) {
      line.err = error;
      level = 'error';
      msg = 'request errored';
    } else if (isMonitorPoll(request.url)) level = 'debug';
    requestLine(reply.log, level, line, msg);
  }
}
