import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import fastifyCors from '@fastify/cors';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import type pg from 'pg';
import type { Config } from './config/index.js';
import { proxyTrust } from './config/trust-proxy.js';
import { registerWebSessions } from './routes/web/web-session.js';
import type { Peers } from './cluster/peers.js';
import { type Lifecycle, createLifecycle } from './runtime/lifecycle.js';
import { createLogger } from './runtime/logging.js';
import { lazySchemaController } from './runtime/lazy-schema-compilers.js';
import { alertsPlugin } from './alerts/plugin.js';
import { alertTransitions } from './alerts/transitions.js';
import { loadMcpSdk, mcpRoutes, prepareMcpTools } from './mcp/plugin.js';
import { loadSanitizer } from './providers/stackexchange/sanitize.js';
import { loadQrEncoder } from './search/instant/qr.js';
import { prepareCurrencyNames } from './search/instant/currency.js';
import { prepareZoneTables } from './search/instant/worldclock.js';
import { prepareKeywordSets } from './search/cards/text.js';
import { providersPlugin } from './upstream/plugin.js';
import { apiRoutes } from './routes/api/index.js';
import { searxngRoutes } from './routes/searxng/index.js';
import { tavilyRoutes } from './routes/tavily/index.js';
import { corsOptions } from './routes/cors.js';
import { healthRoutes } from './routes/health.js';
import { statusPage } from './routes/status-page.js';
import { accountPages } from './routes/web/index.js';
import { PAGE_SECURITY_HEADERS } from './routes/web/security-headers.js';
import { registerPageErrors } from './routes/web/page-errors.js';
import { createSearchCache } from './upstream/cache.js';
import contentsPlugin from './contents/plugin.js';
import gatePlugin from './gate/plugin.js';
import instantPlugin from './search/instant/plugin.js';
import { answerUp, isUpPath } from './routes/up.js';
import { guardConnections } from './runtime/connections.js';
import { answerClientError } from './routes/client-error.js';

export interface AppDeps {
  pool: pg.Pool;
  lifecycle?: Lifecycle;
  /** A pino logger to share (the server's), false to silence logs (tests); default: one per LOG_LEVEL. */
  logger?: FastifyBaseLogger | false;
  /** The other workers of a WORKERS > 1 cluster (cluster/peers.ts); absent in a single process. */
  peers?: Peers;
  /** Log what providers are configured, once per group (default true; in a cluster, one worker does). */
  providerSummary?: boolean;
  /** The time the API gate decides at (ms since the epoch; tests move it); default the database's clock. */
  clock?: () => number;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    pool: pg.Pool;
    lifecycle: Lifecycle;
    /** The other workers of the cluster (WORKERS > 1), else undefined. */
    peers: Peers | undefined;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Fastify's request log, one line per request at its end (method, redacted URL, status, time)
 * instead of its two, so that a request's line says everything about it; the incoming line and
 * monitor polls (frequent and uninteresting) at debug.
 */
class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    // `res` as Fastify's serializer writes it: a logger passed in (the server's) does not have that serializer.
    const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else if (request.url.startsWith('/status/health')) reply.log.debug(fields, 'request completed');
    else reply.log.info(fields, 'request completed');
  }
}

/** Builds the whole application from a config object. Never listens. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify<http.Server>({
    ...(deps.logger === false
      ? { logger: false }
      : { loggerInstance: deps.logger ?? (createLogger(config) as FastifyBaseLogger) }),
    // Every form as a function of (address, hop): what each means is Sift's, not the library's reading.
    trustProxy: proxyTrust(config.TRUST_PROXY),
    bodyLimit: 256 * 1024,
    return503OnClosing: true,
    // Ajv and fast-json-stringify only if a route ever declares a Fastify schema (runtime/lazy-schema-compilers.ts).
    schemaController: lazySchemaController() as FastifyServerOptions['schemaController'],
    logController: new RequestLog(),
    genReqId(req) {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // `/up` is answered by the HTTP server itself, before Fastify's routing and hooks.
    serverFactory(handler: http.RequestListener) {
      // A client gets REQUEST_TIMEOUT_SECONDS to send its headers and body (a slow one is cut with a
      // 408): slow clients cannot hold a connection.
      const requestTimeout = config.REQUEST_TIMEOUT_SECONDS * 1000;
      // Node checks the limits on this interval, so it is a fraction of the limit.
      const connectionsCheckingInterval = Math.min(30_000, Math.max(250, requestTimeout / 4));
      const options = { requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval };
      const server = http.createServer(options, (req, res) => {
        if (!connections.admit(req, res)) return;
        if (isUpPath(req.url)) return answerUp(req, res);
        handler(req, res);
      });
      // MAX_CONNECTIONS (with a reserve for /up and the health checks), MAX_CONNECTIONS_PER_CLIENT and
      // FIRST_BYTE_TIMEOUT_MS: one client cannot take the process's connections (runtime/connections.ts).
      const trust = proxyTrust(config.TRUST_PROXY);
      const connections = guardConnections(server, {
        maxConnections: config.MAX_CONNECTIONS,
        perClient: config.MAX_CONNECTIONS_PER_CLIENT,
        firstByteTimeoutMs: config.FIRST_BYTE_TIMEOUT_MS,
        isProxy: (address) => trust !== false && trust(address, 0),
      });
      return server;
    },
    // `//search` is `/search`, as SearXNG's server merges the slashes: clients join a base URL
    // ending in `/` to their path (n8n's credentials, LangChain JS's apiBase).
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: true, maxParamLength: 200 },
    // Requests node's parser refuses get a JSON 4xx too (see client-error.ts).
    clientErrorHandler: answerClientError,
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
  app.decorate('peers', deps.peers);
  // Prometheus metrics (METRICS_ENABLED): when off, nothing is instrumented at all (prom-client is not even loaded).
  const metricsModule = config.METRICS_ENABLED ? await import('./metrics/index.js') : undefined;
  const metrics = metricsModule?.createMetrics();
  const searchCache = createSearchCache(config.SEARCH_CACHE_MAX_MB);
  app.decorate('searchCache', metrics ? metrics.instrumentCache(searchCache) : searchCache);
  app.decorate('metrics', metrics);

  // The hooks every request runs are callback-style: an async hook costs a promise and a turn of
  // the microtask queue per request even when it has nothing to wait for.
  // The same answer for requests that reach Fastify directly (inject in tests).
  app.addHook('onRequest', (request, reply, done) => {
    if (isUpPath(request.url)) {
      reply
        .code(200)
        .header('Content-Type', 'text/plain; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .send('OK');
      return;
    }
    reply.header('x-request-id', request.id);
    // The one security header JSON answers need; the pages get the full set from helmet.
    reply.header('x-content-type-options', 'nosniff');
    // Every answer is someone's (a search, a key in the URL, a signed-in page): no shared cache keeps one.
    // A route whose answer may be kept says so itself.
    reply.header('cache-control', 'no-store');
    done();
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

  // An empty JSON body is no body, as with any other type: the route judges what it lacks, and an
  // unknown path stays a 404 (Fastify parses bodies before the not-found handler answers).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') done(null, undefined);
    else parseJson(request, text, done);
  });

  // While closing, responses end their connection so in-flight keep-alive sockets do not hold up the close.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });

  app.addHook('onClose', async () => {
    await lifecycle.flush();
  });

  // Libraries and tables made on first use, not with the server (they would add a third to its start):
  // made once it listens, so that the first request needing one does not wait for it. One per turn of
  // the event loop (each takes 40 to 80 ms), so that no request waits behind all of them at once.
  const warmUps = [
    loadSanitizer,
    loadQrEncoder,
    prepareZoneTables,
    prepareCurrencyNames,
    prepareKeywordSets,
    prepareMcpTools,
    () => void loadMcpSdk().catch((err) => app.log.error({ err }, 'the MCP SDK could not be loaded')),
  ];
  const warmUp = (i: number) => {
    if (i >= warmUps.length) return;
    try {
      warmUps[i]!();
    } catch (err) {
      // Not fatal here: the request that needs it will fail with its own error.
      app.log.error({ err }, 'a library could not be loaded');
    }
    setTimeout(() => warmUp(i + 1), 10).unref();
  };
  app.addHook('onListen', async () => {
    setTimeout(() => warmUp(0), 100).unref();
  });

  // Browser clients on other origins (CORS_ORIGINS): preflights answered here, before the API's authentication.
  if (config.CORS_ORIGINS.length > 0) await app.register(fastifyCors, corsOptions(config.CORS_ORIGINS));

  if (metricsModule && metrics) await app.register(metricsModule.metricsPlugin, { metrics });

  // Feature modules register here.
  // Form bodies everywhere (the API's POST endpoints take them too).
  await app.register(fastifyFormbody);
  await app.register(providersPlugin, {
    summary: deps.providerSummary ?? true,
    onTransitions: alertTransitions(config),
  });
  // Webhooks on provider state changes (ALERT_WEBHOOK_URLS): sent from here, never on a request's path.
  if (config.ALERT_WEBHOOK_URLS.length > 0) await app.register(alertsPlugin);
  // Called, not registered: one context fewer for Fastify's shared code (routes/api/index.ts says why).
  await healthRoutes(app);
  // Page contents (CONTENTS_ENABLED): the pages of the web read as text, for the API and MCP.
  await app.register(contentsPlugin);
  // The one gate of every API request (REST, MCP, SearXNG, Tavily): keys, limits, quota, usage.
  await app.register(gatePlugin, { clock: deps.clock });
  // The instant answers' services (the currency rates store), shared by REST and SearXNG.
  await app.register(instantPlugin);
  await app.register(apiRoutes, { prefix: '/api/v1' });
  // MCP for agents: the same keys, limits and usage as /api/v1/ (each tool call is its REST request).
  await app.register(mcpRoutes);
  // SearXNG's JSON API for the tools that speak it: the same gate (routes/searxng/).
  await app.register(searxngRoutes);
  // Tavily's API for its SDKs (base URL https://host/tavily): the same gate (routes/tavily/).
  await app.register(tavilyRoutes, { prefix: '/tavily' });
  // The web pages, in their own context: only they pay for security headers, cookies, sessions and CSRF.
  await app.register(async (web) => {
    await web.register(fastifyHelmet, PAGE_SECURITY_HEADERS);
    registerPageErrors(web);
    await registerWebSessions(web);
    await statusPage(web);
    await accountPages(web);
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
