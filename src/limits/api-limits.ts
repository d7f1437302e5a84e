import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rateLimitHeader, rateLimitPolicy, retryAfterSeconds, throttledDetail } from './headers.js';
import { monthLabel, monthStart, nextMonthStart } from './month.js';
import { admitRequest, pruneIdleRateLimits, type RateDecision } from './rate-limiter.js';
import { createUsageRecorder, monthlySearches, type UsageRecorder } from './usage.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The rate-limit decision for this API request (set once limits were checked). */
    rateLimit?: RateDecision;
  }
  interface FastifyInstance {
    /** Buffered monthly usage; decorated inside the /api/v1 plugin only. */
    usageRecorder?: UsageRecorder;
  }
}

/** Endpoints (below the API prefix, without slashes) that never count searches: the monthly quota skips them. */
const UNCOUNTED_ENDPOINTS = new Set(['', 'status', 'key', 'schema']);

const USAGE_FLUSH_INTERVAL_MS = 1000;
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;
/** Seconds a client is asked to wait when the limiter's database is unreachable. */
const UNAVAILABLE_RETRY_AFTER = '5';

/**
 * Registers, in the /api/v1 plugin and after the authentication hook:
 * - onRequest: burst + sustained limits per API key (one database statement),
 *   then the monthly quota on endpoints that count searches. A database error
 *   fails closed: 503 {"detail":"Service temporarily unavailable."} with
 *   Retry-After (the limits cannot be enforced, and the API's other reads
 *   need the same database anyway).
 * - onResponse: adds the request's search units (request.searchUnits, set by
 *   the handler) to the user's monthly usage when the response is not an
 *   error; buffered, written every second and on shutdown.
 * - onSend: RateLimit-Policy on every API response, RateLimit once checked.
 */
export function registerApiLimits(app: FastifyInstance): void {
  const config = app.config;
  const limits = { burst: config.API_THROTTLE_BURST, sustained: config.API_THROTTLE_SUSTAINED };
  const quota = config.API_MONTHLY_QUOTA;
  const policy = rateLimitPolicy(limits);
  const countsSearches = (request: FastifyRequest): boolean => {
    const route = request.routeOptions.url;
    if (request.is404 || route === undefined || !route.startsWith(app.prefix)) return false;
    return !UNCOUNTED_ENDPOINTS.has(route.slice(app.prefix.length).replace(/^\/+|\/+$/g, ''));
  };

  const usage = createUsageRecorder(app.pool, {
    intervalMs: USAGE_FLUSH_INTERVAL_MS,
    onError: (err) => app.log.warn({ err }, 'usage flush failed; will retry'),
  });
  app.decorate('usageRecorder', usage);
  app.lifecycle.onFlush('monthly usage', () => usage.flush());

  const prune = setInterval(() => {
    pruneIdleRateLimits(app.pool, limits).catch((err: Error) => app.log.warn({ err }, 'rate-limit prune failed'));
  }, PRUNE_INTERVAL_MS);
  prune.unref();
  app.addHook('onClose', async () => {
    clearInterval(prune);
    usage.stop();
  });

  app.addHook('onRequest', async (request, reply) => {
    const principal = request.apiKey;
    if (!principal) return;
    const now = new Date();
    const month = monthStart(now);
    const quotaApplies = quota > 0 && countsSearches(request);

    let decision: RateDecision;
    try {
      decision = await admitRequest(
        app.pool,
        principal.keyId,
        limits,
        quotaApplies ? { userId: principal.userId, month } : undefined,
      );
    } catch (err) {
      request.log.error({ err }, 'rate limiter unavailable');
      return reply
        .code(503)
        .header('Retry-After', UNAVAILABLE_RETRY_AFTER)
        .send({ detail: 'Service temporarily unavailable.' });
    }
    request.rateLimit = decision;

    if (!decision.admitted) {
      const wait = retryAfterSeconds(decision);
      return reply
        .code(429)
        .header('Retry-After', String(wait))
        .send({ detail: throttledDetail(wait) });
    }

    if (quotaApplies) {
      const used = (decision.persistedSearches ?? 0) + usage.pending(principal.userId, month);
      if (used >= quota) {
        const resets = nextMonthStart(now);
        const wait = Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000));
        return reply
          .code(429)
          .header('Retry-After', String(wait))
          .send({ detail: `Monthly search quota exhausted. It resets on ${monthStart(resets)}.` });
      }
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('RateLimit-Policy', policy);
    if (request.rateLimit) reply.header('RateLimit', rateLimitHeader(request.rateLimit));
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const units = request.searchUnits;
    if (!units || units <= 0 || !request.apiKey || reply.statusCode >= 400) return;
    usage.add(request.apiKey.userId, units);
  });
}

export interface KeyUsage {
  /** `YYYY-MM`, UTC. */
  month: string;
  searches: number;
  /** The monthly quota, or null when unlimited (API_MONTHLY_QUOTA=0). */
  quota: number | null;
  /** When the count starts again from zero: the first instant of the next UTC month. */
  resets_at: string;
}

export interface KeyLimit {
  limit: number;
  window_seconds: number;
  remaining: number;
}

/**
 * The `usage` and `limits` members of GET /api/v1/key/: this month's searches
 * of the key's user (written + buffered here) and both rate limits with what
 * remains after this request.
 */
export async function keyUsageAndLimits(
  request: FastifyRequest,
): Promise<{ usage: KeyUsage; limits: { burst: KeyLimit; sustained: KeyLimit } }> {
  const { config, pool, usageRecorder } = request.server;
  const userId = request.apiKey?.userId ?? 0;
  const now = new Date();
  const written = await monthlySearches(pool, userId, now);
  const searches = written + (usageRecorder?.pending(userId, monthStart(now)) ?? 0);
  const decision = request.rateLimit;
  const limit = (rate: typeof config.API_THROTTLE_BURST, remaining: number | undefined): KeyLimit => ({
    limit: rate.limit,
    window_seconds: rate.windowSeconds,
    remaining: remaining ?? rate.limit,
  });
  return {
    usage: {
      month: monthLabel(now),
      searches,
      quota: config.API_MONTHLY_QUOTA > 0 ? config.API_MONTHLY_QUOTA : null,
      resets_at: nextMonthStart(now).toISOString().replace('.000Z', 'Z'),
    },
    limits: {
      burst: limit(config.API_THROTTLE_BURST, decision?.burst.remaining),
      sustained: limit(config.API_THROTTLE_SUSTAINED, decision?.sustained.remaining),
    },
  };
}
