import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type pg from 'pg';
import { AggregatorRegistry, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { LimitsView } from '../upstream/pacing/limits-view.js';
import type { Peers } from '../cluster/peers.js';
import type { SearchCache } from '../upstream/cache.js';
import { healthOf } from '../upstream/health-store.js';
import { tokenMatches } from '../routes/health.js';
import { isInProcessRequest } from './in-process.js';
import { LabelledCounter, LabelledHistogram } from './series.js';

/*
 * Prometheus metrics, off unless METRICS_ENABLED=true:
 * when off, nothing here is created and no hook, wrapper or observer is
 * installed, so requests pay nothing for it.
 *
 * - requests by route pattern (never the raw URL: no query string, no key),
 *   method and status, with a latency histogram (Fastify's own elapsedTime);
 * - upstream calls by provider, source (query or probe) and outcome (ok or
 *   the failure kind), with a latency histogram;
 * - search-cache hits and misses by provider (a miss joining a call already in
 *   flight for the same key counts as a hit: it makes no upstream call);
 * - rate-limit refusals of the API: rate (burst or sustained window), quota
 *   (monthly searches), unavailable (limits not checkable);
 * - the database pool: connections open, idle, clients waiting, the maximum;
 * - provider state as a gauge (`sift_provider_state{state="up"}` = 1 …), read
 *   from provider_status at scrape time; each provider's suspension (seconds
 *   left, this instance's);
 * - Node's process metrics (prom-client's defaults, less the gauges named *_total).
 *
 * With WORKERS > 1, the worker that answers a scrape adds the other workers'
 * series (prom-client's aggregation: counters and histograms summed; the
 * provider state, read from the shared database, and the suspensions, the
 * same on every worker, taken once), so a scrape sees the whole server.
 *
 * Labels come from bounded sets only: route patterns, provider slugs,
 * groups, failure kinds, status codes. No secret reaches a label.
 */

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const UPSTREAM_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10];
const STATES = ['up', 'down', 'unknown'] as const;

type RefusalReason = 'rate' | 'quota' | 'unavailable';

export interface Metrics {
  readonly registry: Registry;
  /** One upstream call finished (runner.ts). */
  upstreamCall(provider: string, source: string, outcome: string, seconds: number): void;
  /** The same cache, counting hits and misses. */
  instrumentCache(cache: SearchCache): SearchCache;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Present only with METRICS_ENABLED=true. */
    metrics?: Metrics;
  }
}

interface RequestSeries {
  count: { inc(): void };
  latency: { observe(v: number): void };
}

export function createMetrics(): Metrics & {
  observeRequest(request: FastifyRequest, reply: FastifyReply): void;
  bindApp(app: FastifyInstance): void;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters, which `promtool check metrics` refuses; each is the sum of the
  // series of its namesake without `_total` (nodejs_active_handles{type} …), which stays.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(name);
  }

  const requests = new LabelledCounter({
    name: 'sift_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const requestLatency = new LabelledHistogram({
    name: 'sift_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const upstreamCalls = new LabelledCounter({
    name: 'sift_upstream_calls_total',
    help: 'Calls to upstream providers, by provider, source (query or probe) and outcome (ok or the failure kind).',
    labelNames: ['provider', 'source', 'outcome'],
    registers: [registry],
  });
  const upstreamLatency = new LabelledHistogram({
    name: 'sift_upstream_call_duration_seconds',
    help: 'Duration of upstream provider calls, by provider, source and outcome.',
    labelNames: ['provider', 'source', 'outcome'],
    buckets: UPSTREAM_BUCKETS,
    registers: [registry],
  });
  const cacheHits = new LabelledCounter({
    name: 'sift_search_cache_hits_total',
    help: 'Upstream answers served from the search cache (or joined in flight), by provider.',
    labelNames: ['provider'],
    registers: [registry],
  });
  const cacheMisses = new LabelledCounter({
    name: 'sift_search_cache_misses_total',
    help: 'Search cache lookups that asked the upstream, by provider.',
    labelNames: ['provider'],
    registers: [registry],
  });
  const refusals = new LabelledCounter({
    name: 'sift_rate_limit_refusals_total',
    help: 'API requests refused by the limits: rate (burst or sustained window), quota (monthly searches), unavailable (limits not checkable).',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason present from the start (at 0), so rate() sees the first refusal.
  for (const reason of ['rate', 'quota', 'unavailable'] as const) refusals.child(reason);

  let app: FastifyInstance | undefined;
  const pool = () => app?.pool as (pg.Pool & { options?: { max?: number } }) | undefined;
  new Gauge({
    name: 'sift_db_pool_connections',
    help: 'Database pool connections, by state (total open, idle).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      if (!p) return;
      this.set({ state: 'total' }, p.totalCount);
      this.set({ state: 'idle' }, p.idleCount);
    },
  });
  new Gauge({
    name: 'sift_db_pool_waiting_clients',
    help: 'Queries waiting for a database pool connection.',
    registers: [registry],
    collect() {
      const p = pool();
      if (p) this.set(p.waitingCount);
    },
  });
  new Gauge({
    name: 'sift_db_pool_max_connections',
    help: 'The database pool size limit.',
    registers: [registry],
    collect() {
      const max = pool()?.options?.max;
      if (typeof max === 'number') this.set(max);
    },
  });
  new Gauge({
    name: 'sift_provider_state',
    help: 'State of each configured provider (1 for its current state: up, down, or unknown = not yet observed).',
    labelNames: ['provider', 'group', 'state'] as const,
    registers: [registry],
    // Every worker reads the same rows.
    aggregator: 'first',
    async collect() {
      this.reset();
      if (!app) return;
      let rows: Awaited<ReturnType<FastifyInstance['health']['reader']['rows']>>;
      try {
        rows = await app.health.reader.rows();
      } catch (err) {
        // The database cannot be read: no state series rather than invented ones.
        app.log.debug({ err }, 'metrics: provider state unavailable');
        return;
      }
      const configured = app.providers.configured();
      const health = healthOf(configured, rows);
      configured.forEach((p, i) => {
        const state = health[i]!.state;
        for (const s of STATES) this.set({ provider: p.slug, group: p.group, state: s }, s === state ? 1 : 0);
      });
    },
  });

  new Gauge({
    name: 'sift_provider_suspended_seconds',
    help: 'Seconds until this instance calls a suspended provider again (searches skip it meanwhile); 0 when not suspended.',
    labelNames: ['provider', 'group'] as const,
    registers: [registry],
    // The workers suspend together (upstream/suspension.ts).
    aggregator: 'max',
    collect() {
      this.reset();
      if (!app) return;
      const left = new Map(app.health.suspensions.list().map((s) => [s.provider, s.remainingMs / 1000]));
      for (const p of app.providers.configured()) this.set({ provider: p.slug, group: p.group }, left.get(p.slug) ?? 0);
    },
  });

  // One read of the shared limits per scrape serves both gauges.
  let limitsRead: { at: number; views: Promise<Map<string, LimitsView>> } | undefined;
  const limitsNow = (): Promise<Map<string, LimitsView>> => {
    if (!app) return Promise.resolve(new Map());
    if (!limitsRead || performance.now() - limitsRead.at > 1000) {
      limitsRead = { at: performance.now(), views: app.health.limits() };
    }
    return limitsRead.views;
  };
  new Gauge({
    name: 'sift_provider_budget_calls',
    help: "Each budgeted provider's budget of calls for its period (kind=limit) and the calls made in it so far by every instance (kind=used).",
    labelNames: ['provider', 'period', 'kind'] as const,
    registers: [registry],
    aggregator: 'first',
    async collect() {
      this.reset();
      const views = await limitsNow().catch(() => new Map<string, LimitsView>());
      for (const [provider, v] of views) {
        if (!v.budget) continue;
        this.set({ provider, period: v.budget.period, kind: 'limit' }, v.budget.limit);
        this.set({ provider, period: v.budget.period, kind: 'used' }, v.budget.used);
      }
    },
  });
  new Gauge({
    name: 'sift_provider_upstream_remaining_calls',
    help: "Calls left in the upstream's own long window (a month), as its last answer reported.",
    labelNames: ['provider'] as const,
    registers: [registry],
    aggregator: 'first',
    async collect() {
      this.reset();
      const views = await limitsNow().catch(() => new Map<string, LimitsView>());
      for (const [provider, v] of views) if (v.upstream) this.set({ provider }, v.upstream.remaining);
    },
  });

  // The count and latency series of one label set, found together.
  const series = new Map<string, RequestSeries>();
  const upstreamSeries = new Map<string, RequestSeries>();
  function seriesOf(route: string, method: string, status: number): RequestSeries {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (!s) {
      const labels = [route, method, String(status)];
      s = { count: requests.child(...labels), latency: requestLatency.child(...labels) };
      series.set(key, s);
    }
    return s;
  }

  /** Why the API gate refused the request (gate/api-gate.ts), or null for any other answer. */
  function refusalOf(request: FastifyRequest): RefusalReason | null {
    const why = request.apiCall?.outcome;
    return why === 'rate' || why === 'quota' || why === 'unavailable' ? why : null;
  }

  return {
    registry,
    bindApp(instance) {
      app = instance;
    },
    observeRequest(request, reply) {
      const status = reply.statusCode;
      // An MCP tool call's REST request is counted as the POST /mcp that carried it; its refusal still counts.
      if (!isInProcessRequest(request)) {
        const s = seriesOf(request.routeOptions.url ?? 'unmatched', request.method, status);
        s.count.inc();
        s.latency.observe(reply.elapsedTime / 1000);
      }
      if (status === 429 || status === 503) {
        const reason = refusalOf(request);
        if (reason) refusals.child(reason).inc();
      }
    },
    upstreamCall(provider, source, outcome, seconds) {
      const key = `${provider} ${source} ${outcome}`;
      let s = upstreamSeries.get(key);
      if (!s) {
        s = {
          count: upstreamCalls.child(provider, source, outcome),
          latency: upstreamLatency.child(provider, source, outcome),
        };
        upstreamSeries.set(key, s);
      }
      s.count.inc();
      s.latency.observe(seconds);
    },
    instrumentCache(cache) {
      return {
        getOrFetch(key, ttlMs, size, fetch, options) {
          let asked = false;
          // getOrFetch calls fetch synchronously on a miss, and never on a hit or a call in flight.
          const result = cache.getOrFetch(
            key,
            ttlMs,
            size,
            () => {
              asked = true;
              return fetch();
            },
            options,
          );
          const provider = providerOfKey(key);
          (asked ? cacheMisses : cacheHits).child(provider).inc();
          return result;
        },
        has: (key) => cache.has(key),
        delete: (key) => cache.delete(key),
        clear: () => cache.clear(),
        get size() {
          return cache.size;
        },
        get generation() {
          return cache.generation;
        },
      };
    },
  };
}

/** Cache keys start with the provider slug (runner.ts); anything else is `other`. */
function providerOfKey(key: string): string {
  const slug = key.slice(0, key.indexOf(' '));
  return /^provider_\d{2}$|^[a-z]+$/.test(slug) ? slug : 'other';
}

/**
 * Registers (at the root, before the routes) the request hook and GET
 * /metrics. With METRICS_TOKEN set, a scrape needs `Authorization: Bearer
 * <token>` (401 otherwise).
 */
async function metricsRoutes(app: FastifyInstance, options: { metrics: ReturnType<typeof createMetrics> }) {
  const { metrics } = options;
  metrics.bindApp(app);
  const token = app.config.METRICS_TOKEN;

  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request, reply);
    done();
  });

  app.get('/metrics', async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    if (token) {
      const auth = request.headers.authorization ?? '';
      const supplied = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
      if (!tokenMatches(supplied, token)) {
        return reply
          .code(401)
          .header('WWW-Authenticate', 'Bearer')
          .send({ detail: 'Invalid or missing metrics token.' });
      }
    }
    const text = app.peers ? await clusterMetrics(metrics.registry, app.peers) : await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
  app.peers?.answer('metrics', () => metrics.registry.getMetricsAsJSON());
}

/** This worker's series with every other worker's (those that answer in time). */
async function clusterMetrics(registry: Registry, peers: Peers): Promise<string> {
  const [own, others] = await Promise.all([registry.getMetricsAsJSON(), peers.ask('metrics')]);
  const all = [own, ...others.filter((answer): answer is object[] => Array.isArray(answer))];
  return AggregatorRegistry.aggregate(all).metrics();
}

/** Hooks and the route at the root: they see every route of the app. */
export const metricsPlugin = fastifyPlugin(metricsRoutes, {
  name: 'sift-metrics',
  decorators: { fastify: ['config'] },
});
