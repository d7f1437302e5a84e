import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/*
 * The app's request log lines. Apart from logging.ts so that a cluster
 * primary, which serves no request, does not load Fastify to log.
 */

/** Monitor polling is frequent and uninteresting: its request lines go to debug. */
function isMonitorPoll(url: string): boolean {
  return url.startsWith('/status/health');
}

/**
 * One log line per request, at completion (method, redacted URL, status,
 * time), instead of Fastify's two; the incoming line only at debug.
 */
export class SiftLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else if (isMonitorPoll(request.url)) reply.log.debug(line, 'request completed');
    else reply.log.info(line, 'request completed');
  }
}
