import type { FastifyError, FastifyInstance } from 'fastify';
import { sendPage } from '../views.js';

/*
 * A page that fails answers a page, not the API's JSON: 503 with Retry-After when the database is
 * out of reach (said in the log once per outage, not once per request), 500 otherwise. Client
 * errors (a CSRF refusal, a body too large) keep their own answers.
 */

/** Whether an error says the database could not be reached or did not answer in time. */
export function isDatabaseUnreachable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  if (
    typeof e?.code === 'string' &&
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03'].includes(e.code)
  ) {
    return true;
  }
  return (
    typeof e?.message === 'string' &&
    /timeout exceeded|Query read timeout|Connection terminated|connection refused|ECONN/i.test(e.message)
  );
}

export function registerPageErrors(web: FastifyInstance): void {
  let databaseAway = false;
  web.addHook('onResponse', (_request, reply, done) => {
    if (databaseAway && reply.statusCode < 500) {
      databaseAway = false;
      web.log.info('the pages reach the database again');
    }
    done();
  });
  web.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status < 500) throw error;
    const page = { title: 'Unavailable', user: null, statusPageEnabled: web.config.STATUS_PAGE_ENABLED };
    if (status === 503 || isDatabaseUnreachable(error) || isDatabaseUnreachable(error.cause)) {
      if (!databaseAway) request.log.warn({ err: error }, 'the pages cannot reach the database: answering 503');
      databaseAway = true;
      reply.header('Retry-After', '5');
      return sendPage(
        reply,
        'unavailable',
        {
          ...page,
          heading: 'Temporarily unavailable',
          message: 'Sift cannot reach its database right now.',
        },
        503,
      );
    }
    request.log.error({ err: error }, 'request failed');
    return sendPage(
      reply,
      'unavailable',
      {
        ...page,
        title: 'Error',
        heading: 'Something went wrong',
        message: 'This page could not be shown.',
      },
      500,
    );
  });
}
