/*
 * Floor 2, the fan-out floor: bare Fastify + a bare undici upstream serving
 * every search endpoint of Sift through Sift's own feature modules (the same
 * adapters, blends, merge and card logic: src/search/*) and its response
 * cache, but with no authentication, rate limits, usage counting, database or
 * health recording, and no run-ahead of the limits.
 *
 *   GET /api/v1/web/, images/, news/, videos/, suggest/, maps/, cards/,
 *   translate/ (GET), translate/languages/
 *
 * The upstream: each call is one undici request bounded by the provider's
 * timeout, with Sift's Accept-Encoding (a compressed answer is decoded as Sift
 * decodes it, so both sides get the same bytes from every fake); gather() runs the tasks at once under an optional deadline.
 * Multi-step flows (cards: Wikipedia search then summary, TheTVDB login then
 * search then details, the Wikidata classification) run their steps through
 * the same bare call. Like Sift's runner, the floor keeps answers in Sift's
 * response cache through Sift's cached stage (src/upstream/cache.ts and
 * stages/cached.ts: SEARCH_CACHE_MAX_MB's default, each provider's TTL, the
 * same keys and size estimates, the same rule of where keeping pays): plain
 * calls, flow values and the steps that ask to be cached; flow memos
 * (TheTVDB's login token) in a map. With a distinct query per request nothing
 * is found again but what Sift also finds again (the Wikidata classification
 * of a subject, keyed by its item). Until
 * 2026-11-30 the floor cached flow values only, and that cost counted as
 * Sift's overhead (bench/README.md).
 *
 * Instant answers are not served here: their floor is the bare JSON route
 * (bench/floor-json.ts).
 *
 * Environment: the fakes' env (BRAVE_BASE_URL, BRAVE_API_KEY, …) as JSON in argv[2].
 */
import Fastify, { type FastifyReply } from 'fastify';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Agent, interceptors, request } from 'undici';
import { parseConfig } from '../src/config/index.js';
import { createSearchCache, estimateBytes } from '../src/upstream/cache.js';
import { inProcessCache } from '../src/upstream/stages/cached.js';
import { sharingPolicy } from '../src/upstream/shared-policy.js';
import { createProviderDirectory } from '../src/providers/registry.js';
import {
  type FlowSteps,
  type ProviderCall,
  type ProviderFlow,
  type ProviderTask,
  type Upstream,
  UpstreamError,
} from '../src/providers/types.js';
import { searchCards } from '../src/search/cards/index.js';
import { searchMaps } from '../src/search/maps.js';
import { searchImages, searchNews, searchVideos } from '../src/search/media.js';
import type { SearchOutcome } from '../src/search/outcome.js';
import {
  cardsQuerySchema,
  imagesQuerySchema,
  mapsQuerySchema,
  suggestQuerySchema,
  translateInput,
  translateSchema,
  webQuerySchema,
} from '../src/search/queries.js';
import { parseQuery } from '../src/search/query-string.js';
import { suggest } from '../src/search/suggest.js';
import { translate, translationLanguages } from '../src/search/translate.js';
import { type SearchDeps, searchWeb } from '../src/search/web.js';

const config = parseConfig({ ...JSON.parse(process.argv[2] ?? '{}'), LOG_LEVEL: 'silent' });
const providers = createProviderDirectory(config);
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 256 });
const redirecting = agent.compose(interceptors.redirect({ maxRedirections: 3 }));

const isFlow = <T>(task: ProviderTask<T>): task is ProviderFlow<T> => 'run' in task;

function asUpstreamError(task: ProviderTask<unknown>, err: unknown): UpstreamError {
  return err instanceof UpstreamError ? err : new UpstreamError(task.provider, 'connect', String(err));
}

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

/** A compressed body decoded as Sift's HTTP layer does (zlib, asynchronously). */
function decoded(raw: Buffer, encoding: string | string[] | undefined): Promise<Buffer> | Buffer {
  const enc = String(encoding ?? '')
    .trim()
    .toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return gunzip(raw);
  if (enc === 'deflate') return inflate(raw);
  if (enc === 'br') return brotli(raw);
  return raw;
}

/** One upstream call: a bare undici request, the body parsed as JSON (or text), the adapter's parse. */
async function bareCall<T>(c: ProviderCall<T>): Promise<T> {
  if (!providers.isConfigured(c.provider) && !c.ownCredential) {
    throw new UpstreamError(c.provider, 'not_configured', 'not configured');
  }
  const timeout = c.timeoutMs ?? providers.timeoutMs(c.provider);
  const res = await request(c.request.url, {
    method: c.request.method ?? 'GET',
    // Sift's own request headers: an upstream that compresses when asked (Stack Exchange) answers both alike.
    headers: { 'accept-encoding': 'gzip, deflate, br', ...c.request.headers },
    body: c.request.body,
    dispatcher: c.request.followRedirects ? redirecting : agent,
    headersTimeout: timeout,
    bodyTimeout: timeout,
  });
  const text = (await decoded(Buffer.from(await res.body.arrayBuffer()), res.headers['content-encoding'])).toString(
    'utf8',
  );
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw new UpstreamError(c.provider, 'http_status', `status ${res.statusCode}`, res.statusCode);
  }
  return c.parse(c.text ? text : JSON.parse(text));
}

const memos = new Map<string, { value: unknown; until: number }>();
const cache = createSearchCache(config.SEARCH_CACHE_MAX_MB);
// Sift's cached stage, with its rule of where keeping pays (nothing paces the floor's calls).
const cachedStage = inProcessCache(
  cache,
  sharingPolicy(() => false),
);

/** A task through the cache when its TTL allows, as Sift's runner does (src/upstream/runner.ts). */
function cached<T>(task: ProviderTask<T>, fetch: () => Promise<T>): Promise<T> {
  const ttl = task.cacheTtlMs ?? providers.cacheTtlMs(task.provider);
  if (ttl <= 0) return fetch();
  let key: string;
  if (isFlow(task)) key = `${task.provider} flow ${task.key}`;
  else {
    const { method = 'GET', url, body } = task.request;
    key = body === undefined ? `${task.provider} ${method} ${url}` : `${task.provider} ${method} ${url} ${body}`;
  }
  const size = task.size ? (v: T) => task.size!(v) : estimateBytes;
  return cachedStage({ key, ttlMs: ttl, size, provider: task.provider }, fetch);
}

const steps: FlowSteps = {
  // A step is cached only when it asks to be, as in Sift (the flow's value is cached as a whole).
  call: (c) => (c.cacheTtlMs === undefined || c.cacheTtlMs <= 0 ? bareCall(c) : cached(c, () => bareCall(c))),
  async memo<U>(key: string, ttlMs: number, compute: () => Promise<U>): Promise<U> {
    const hit = memos.get(key);
    if (hit && hit.until > Date.now()) return hit.value as U;
    const value = await compute();
    memos.set(key, { value, until: Date.now() + ttlMs });
    return value;
  },
  forget: (key) => {
    memos.delete(key);
  },
};

function run<T>(task: ProviderTask<T>): Promise<T> {
  return cached(task, () => (isFlow(task) ? task.run(steps) : bareCall(task)));
}

const upstream: Upstream = {
  call: (task) => run(task).catch((err: unknown) => Promise.reject(asUpstreamError(task, err))),
  async gather(tasks, options = {}) {
    let timer: NodeJS.Timeout | undefined;
    const deadline =
      options.deadlineMs === undefined
        ? null
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('deadline')), options.deadlineMs);
          });
    deadline?.catch(() => {});
    try {
      return await Promise.all(
        tasks.map((task) =>
          (deadline ? Promise.race([run(task), deadline]) : run(task)).then(
            (value) => ({ provider: task.provider, ok: true as const, value }),
            (err: unknown) => ({ provider: task.provider, ok: false as const, error: asUpstreamError(task, err) }),
          ),
        ),
      );
    } finally {
      clearTimeout(timer);
    }
  },
};
const deps: SearchDeps = { config, upstream, providers };

const app = Fastify({ logger: false });

function send<B>(reply: FastifyReply, outcome: SearchOutcome<B>) {
  if ('headers' in outcome && outcome.headers) reply.headers(outcome.headers);
  return reply.code(outcome.status).send(outcome.body);
}

app.get('/api/v1/web/', async (req, reply) => {
  const parsed = parseQuery(webQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await searchWeb(deps, parsed.value));
});
app.get('/api/v1/images/', async (req, reply) => {
  const parsed = parseQuery(imagesQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await searchImages(deps, parsed.value));
});
app.get('/api/v1/news/', async (req, reply) => {
  const parsed = parseQuery(webQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await searchNews(deps, parsed.value));
});
app.get('/api/v1/videos/', async (req, reply) => {
  const parsed = parseQuery(webQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await searchVideos(deps, parsed.value));
});
app.get('/api/v1/suggest/', async (req, reply) => {
  const parsed = parseQuery(suggestQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return reply.send(await suggest(deps, parsed.value.q));
});
app.get('/api/v1/maps/', async (req, reply) => {
  const parsed = parseQuery(mapsQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await searchMaps(deps, parsed.value));
});
app.get('/api/v1/cards/', async (req, reply) => {
  const parsed = parseQuery(cardsQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await searchCards(deps, parsed.value));
});
app.get('/api/v1/translate/', async (req, reply) => {
  const parsed = parseQuery(translateSchema, translateInput(req.query));
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  return send(reply, await translate(deps, parsed.value));
});
app.get('/api/v1/translate/languages/', async (_req, reply) => reply.send(await translationLanguages(deps)));

await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(
  `${JSON.stringify({ url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`,
);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
