import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
} from 'fastify';
import fastifyFormbody from '@fastify/formbody';
import type pg from 'pg';
import type { Config } from './config/index.js';
import { registerWebSessions } from './auth/web-session.js';
import { type Lifecycle, createLifecycle } from './lifecycle.js';
import { SiftLogController, loggerOptions } from './logging.js';
import { providersPlugin } from './providers/plugin.js';
import { apiRoutes } from './routes/api/index.js';
import { healthRoutes } from './routes/health.js';
import { statusPage } from './routes/status-page.js';
import { accountPages } from './routes/web/index.js';
import { createSearchCache } from './search/cache.js';
import { answerUp, isUpPath } from './routes/up.js';

export interface AppDeps {
  pool: pg.Pool;
  lifecycle?: Lifecycle;
  /** A pino logger to share (the server's), false to silence logs (tests); default: one per LOG_LEVEL. */
  logger?: FastifyBaseLogger | false;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    pool: pg.Pool;
    lifecycle: Lifecycle;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Builds the whole application from a config object. Never listens. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify<http.Server>({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: deps.logger === false ? false : loggerOptions(config) }),
    // A hop count is valid at run time; the type only lists the other forms.
    trustProxy: config.TRUST_PROXY as boolean | string,
    bodyLimit: 256 * 1024,
    return503OnClosing: true,
    logController: new SiftLogController(),
    genReqId(req) {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // `/up` is answered by the HTTP server itself, before Fastify's routing and hooks.
    serverFactory(handler: http.RequestListener) {
      return http.createServer((req, res) => {
        if (isUpPath(req.url)) return answerUp(req, res);
        handler(req, res);
      });
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Malformed URLs (bad percent-encoding and the like) get a JSON 400 like every other client error.
    frameworkErrors(error, _request, rawReply) {
      (rawReply as unknown as FastifyReply)
        .code(400)
        .header('Cache-Control', 'no-store')
        .send({ detail: error.code === 'FST_ERR_BAD_URL' ? 'Malformed URL.' : 'Bad request.' });
    },
  });

  const lifecycle = deps.lifecycle ?? createLifecycle();
  app.decorate('config', config);
  app.decorate('pool', deps.pool);
  app.decorate('lifecycle', lifecycle);
  app.decorate('searchCache', createSearchCache(config.SEARCH_CACHE_MAX_MB));

  // The same answer for requests that reach Fastify directly (inject in tests).
  app.addHook('onRequest', async (request, reply) => {
    if (isUpPath(request.url)) {
      return reply
        .code(200)
        .header('Content-Type', 'text/plain; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .send('OK');
    }
    reply.header('X-Request-Id', request.id);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(status).send({ detail: 'Internal server error.' });
    }
    return reply.code(status).send({ detail: clientErrorMessage(error) });
  });

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not found.' }));

  // While closing, responses end their connection so in-flight keep-alive sockets do not hold up the close.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('Connection', 'close');
    return payload;
  });

  app.addHook('onClose', async () => {
    await lifecycle.flush();
  });

  // Feature modules register here.
  // Form bodies everywhere (the API's POST endpoints take them too).
  await app.register(fastifyFormbody);
  await app.register(providersPlugin);
  await app.register(healthRoutes);
  await app.register(apiRoutes, { prefix: '/api/v1' });
  // The web pages, in their own context: only they pay for cookies, sessions and CSRF.
  await app.register(async (web) => {
    await registerWebSessions(web);
    await web.register(statusPage);
    await web.register(accountPages);
  });

  return app;
}

function clientErrorMessage(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported media type.';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large.';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is not valid JSON.';
    default:
      return error.message || 'Bad request.';
  }
}
