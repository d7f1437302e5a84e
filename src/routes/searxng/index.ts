import { readFileSync } from 'node:fs';
import fastifyPlugin from 'fastify-plugin';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { presentedKey } from '../../auth/api-key-auth.js';
import { chargeOnly, type GatePlan, gatedRoute } from '../../gate/api-gate.js';
import { PROJECT_ROOT } from '../../runtime/project-root.js';
import { providersOffering } from '../../providers/registry.js';
import { qSchema } from '../../search/queries.js';
import { suggest } from '../../search/suggest.js';
import { CATEGORIES, ENGINES } from '../../search/engines.js';
import {
  type FieldErrors,
  MAX_SEARX_UNITS,
  outputFormat,
  parseSearxQuery,
  type RawFields,
  rawFields,
  type SearxQuery,
  searxUnits,
  unsupportedFormat,
} from './params.js';
import { unresponsiveEngines } from './results.js';
import { csvBody, csvDisposition, rssBody } from './formats.js';
import { searxSearch } from './search.js';
import { instantDeps, searchDeps } from '../feature-deps.js';

/*
 * SearXNG's JSON API, for the tools that speak it (Open WebUI, LibreChat, Perplexica, LangChain,
 * n8n, mcp-searxng): GET and POST /search?format=json, GET /config, GET /autocompleter; at the
 * root, and below `/searxng/<key>` for clients that take only a URL (SEARXNG_KEY_IN_URL_ENABLED).
 *
 * Every request passes the API gate like /api/v1/: a key in the usual headers, as the password
 * (or user name) of HTTP Basic auth, or in the base URL; the same rate limits and monthly quota;
 * a /search counts what the same searches count over REST (params.ts, searxUnits), an
 * /autocompleter one, on a success only. Errors are JSON with
 * SearXNG's `error` and Sift's `detail`, never HTML; a key in the URL never reaches a log line
 * (runtime/logging.ts), a metric label (the route pattern) or an error body.
 */

/** A key presented as HTTP Basic credentials: the password, else the user name (`https://<key>@host`). */
export function basicAuthKey(authorization: unknown): string | null {
  if (typeof authorization !== 'string') return null;
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization);
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = (colon < 0 ? decoded : decoded.slice(0, colon)).trim();
  const password = colon < 0 ? '' : decoded.slice(colon + 1).trim();
  return password || user || null;
}

interface ScopeOptions {
  /** The scope's prefix carries the key (`/searxng/:key`). */
  keyInUrl: boolean;
}

function keyOf(request: FastifyRequest, keyInUrl: boolean): string | null {
  if (keyInUrl) {
    const key = (request.params as { key?: unknown }).key;
    if (typeof key === 'string' && key !== '') return key;
  }
  return presentedKey(request.headers) ?? basicAuthKey(request.headers.authorization);
}

/** A SearXNG-style error: `error` as SearXNG writes it, `detail` as every Sift error has it. */
function fail(reply: FastifyReply, status: number, detail: string, extra: Record<string, unknown> = {}) {
  return reply.code(status).send({ error: detail, detail, ...extra });
}

const describeErrors = (errors: FieldErrors) =>
  Object.entries(errors)
    .map(([field, message]) => `${field}: ${message}`)
    .join(' ');

type Parsed = { fields: RawFields; format: string | null; query: ReturnType<typeof parseSearxQuery> };

function parse(request: FastifyRequest, withBody = request.method === 'POST'): Parsed {
  const fields = rawFields(request.query, withBody ? request.body : undefined);
  return { fields, format: unsupportedFormat(fields), query: parseSearxQuery(fields) };
}

/** Whether a request comes with a body (LangChain and n8n post none: everything is in the query string). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return request.headers['transfer-encoding'] !== undefined;
}

let version: string | undefined;
function siftVersion(): string {
  if (version === undefined) {
    try {
      version = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: string })
        .version;
    } catch {
      /* unknown */
    }
    version ??= '0';
  }
  return version;
}

/** SearXNG's /config: the categories and engines this instance serves, with what each supports. */
function configBody(app: FastifyInstance) {
  const timeoutOf = (slug: Parameters<typeof app.providers.timeoutMs>[0]) => app.providers.timeoutMs(slug) / 1000;
  const suggester = providersOffering('suggest').some((p) => p.calls.suggest('sift', app.config) !== null);
  return {
    categories: [...CATEGORIES],
    engines: ENGINES.map((e) => ({
      name: e.name,
      categories: [...e.categories],
      shortcut: e.shortcut,
      enabled: app.providers.isConfigured(e.slug),
      paging: e.paging,
      language_support: e.languages,
      languages: [],
      regions: [],
      safesearch: e.safesearch,
      time_range_support: e.timeRange,
      timeout: timeoutOf(e.slug),
    })),
    plugins: [],
    instance_name: 'Sift',
    locales: {},
    default_locale: '',
    autocomplete: suggester ? 'brave' : '',
    safe_search: 1,
    default_theme: 'simple',
    version: siftVersion(),
    brand: { PRIVACYPOLICY_URL: null, CONTACT_URL: null, GIT_URL: null, GIT_BRANCH: null, DOCS_URL: null },
    limiter: {
      enabled: false,
      'botdetection.ip_limit.link_token': false,
      'botdetection.ip_lists.pass_searxng_org': false,
    },
    doi_resolvers: [],
    default_doi_resolver: '',
    public_instance: false,
  };
}

async function searxngScope(scope: FastifyInstance, options: ScopeOptions): Promise<void> {
  const app = scope;
  scope.apiGate.guard(scope, {
    limited: true,
    presented: (request) => keyOf(request, options.keyInUrl),
    // Its refusals in SearXNG's error shape, as its other errors are.
    refusal: (detail) => ({ error: detail, detail }),
  });
  // Basic auth is accepted here: a 401 says so, so that a client holding the key as a password sends it.
  scope.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode === 401) reply.header('WWW-Authenticate', ['Basic realm="Sift", charset="UTF-8"', 'Api-Key']);
    done(null, payload);
  });
  // LangChain and n8n post `Content-Type: application/json` with no body at all (everything is in
  // the query string): an empty JSON body is no body here, not a 400.
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(Object.assign(new Error('Request body is not valid JSON.'), { statusCode: 400 }), undefined);
    }
  });

  // Priced as the same searches over REST (searxUnits). A POST's body is read after admission:
  // without one, its query string is the whole request; with one, the most a search can count is
  // reserved, and the handler keeps only what it asked (chargeOnly).
  const searchPlan = (request: FastifyRequest): GatePlan<Parsed> => {
    if (request.method === 'POST' && hasBody(request)) return { metered: true, units: MAX_SEARX_UNITS };
    const parsed = parse(request, false);
    const units = parsed.format === null && parsed.query.ok ? searxUnits(parsed.query.value) : 0;
    return { metered: true, units, parsed: request.method === 'POST' ? undefined : parsed };
  };

  const searchHandler = async (request: FastifyRequest, reply: FastifyReply, planned: Parsed | undefined) => {
    const parsed = planned ?? parse(request);
    if (parsed.format !== null) return fail(reply, 400, parsed.format);
    if (!parsed.query.ok) return fail(reply, 400, describeErrors(parsed.query.errors));
    const query: SearxQuery = parsed.query.value;
    chargeOnly(request, searxUnits(query));
    const userAgent = request.headers['user-agent'];
    const outcome = await searxSearch(searchDeps(app, request), instantDeps(app, request), query, {
      ip: request.ip ?? '',
      userAgent: typeof userAgent === 'string' ? userAgent : '',
      log: request.log,
    });
    if (outcome.status === 200) {
      const format = outputFormat(parsed.fields);
      if (format === 'csv') {
        reply.header('content-type', 'application/csv; charset=utf-8');
        reply.header('content-disposition', csvDisposition(query.q));
        return csvBody(outcome.body);
      }
      if (format === 'rss') {
        reply.header('content-type', 'text/xml; charset=utf-8');
        return rssBody(outcome.body, `${request.protocol}://${request.host}/search`);
      }
      return outcome.body;
    }
    if (outcome.headers) reply.headers(outcome.headers);
    return fail(reply, outcome.status, outcome.detail, {
      unresponsive_engines: unresponsiveEngines(outcome.unresponsive),
    });
  };

  gatedRoute(scope, { method: ['GET', 'POST'], url: '/search', plan: searchPlan, handler: searchHandler });
  // The base URL itself searches too, as SearXNG's index does with a query (LangChain Python's
  // SearxSearchWrapper asks `searx_host` as it is); at the root that path is Sift's own page.
  if (options.keyInUrl) {
    gatedRoute(scope, { method: ['GET', 'POST'], url: '/', plan: searchPlan, handler: searchHandler });
  }

  scope.get('/config', async () => configBody(app));
  // The root's /healthz is the app's own (no key); below a key, the same answer.
  if (options.keyInUrl)
    scope.get('/healthz', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('OK'));

  const autocompletePlan = (request: FastifyRequest): GatePlan => {
    const q = rawFields(request.query, undefined).q?.trim() ?? '';
    return { metered: true, units: q === '' ? 0 : 1 };
  };
  scope.get('/autocompleter', { config: { apiGate: autocompletePlan } }, async (request, reply) => {
    const raw = rawFields(request.query, undefined).q?.trim() ?? '';
    let suggestions: string[] = [];
    if (raw !== '') {
      const q = qSchema.safeParse(raw);
      if (!q.success) return fail(reply, 400, `q: ${q.error.issues[0]?.message ?? 'Invalid.'}`);
      suggestions = (await suggest(searchDeps(app, request), q.data)).suggestions;
    }
    // SearXNG's two forms: a plain list for its own search form, OpenSearch's for everyone else.
    if (request.headers['x-requested-with'] === 'XMLHttpRequest') return suggestions;
    reply.header('content-type', 'application/x-suggestions+json; charset=utf-8');
    return JSON.stringify([
      raw,
      suggestions,
      [],
      [],
      { 'google:suggestrelevance': suggestions.map((_, i) => 600 - i) },
    ]);
  });
}

/** The SearXNG-compatible API: at the root, and below /searxng/<key> unless SEARXNG_KEY_IN_URL_ENABLED is false. */
async function searxngRoutesScope(app: FastifyInstance): Promise<void> {
  // SearXNG's health check, which its container images and uptime monitors poll: no key, no cost.
  app.get('/healthz', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('OK'));
  await app.register(searxngScope, { keyInUrl: false });
  if (app.config.SEARXNG_KEY_IN_URL_ENABLED) {
    await app.register(searxngScope, { prefix: '/searxng/:key', keyInUrl: true });
    return;
  }
  // Turned off: said plainly, rather than a 401 that reads as a bad key.
  app.route({
    method: ['GET', 'POST'],
    url: '/searxng/:key/*',
    handler: (_request, reply) =>
      fail(
        reply,
        404,
        'Keys in URLs are turned off on this instance (SEARXNG_KEY_IN_URL_ENABLED=false): use the root URL and send the key in the X-API-Key header or as the HTTP Basic auth password.',
      ),
  });
}

/** Registered by the app (app.ts) after the services it uses, which Fastify checks by name. */
export const searxngRoutes = fastifyPlugin(searxngRoutesScope, {
  name: 'sift-searxng',
  encapsulate: true,
  dependencies: ['sift-upstream', 'sift-gate', 'sift-instant'],
});
