import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitHeader, rateLimitPolicy, retryAfterSeconds, throttledDetail } from './headers.js';
import { monthLabel, monthStart, nextMonthStart } from './month.js';
import { createAdmissionBatcher } from './batch.js';
import { pruneIdleRateLimits, type RateDecision } from './rate-limiter.js';
import { createRunAheadHints } from './run-ahead.js';
import { createUsageRecorder, monthlySearches, type UsageRecorder } from './usage.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The rate-limit decision for this API request (set once limits were checked). */
    rateLimit?: RateDecision;
    /**
     * Set when the request's limits are still being checked while its handler
     * runs (a route with `config.runsAhead`); resolves with the refusal to send,
     * or null when admitted. Handlers settle it with `admitted()` or `runAhead()`.
     */
    admission?: Promise<Refusal | null>;
    /** Asks for the pending decision at once (the work that ran ahead is done). */
    hurryAdmission?: () => void;
  }
  interface FastifyContextConfig {
    /**
     * The handler may start its upstream calls while the limits are checked
     * (it must settle `request.admission` before answering; see runAhead).
     */
    runsAhead?: boolean;
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

/** A response refusing the request: over a limit (429) or limits not checkable (503). */
export interface Refusal {
  status: 429 | 503;
  retryAfter: string;
  detail: string;
}

const UNAVAILABLE: Refusal = {
  status: 503,
  retryAfter: UNAVAILABLE_RETRY_AFTER,
  detail: 'Service temporarily unavailable.',
};

function sendRefusal(reply: FastifyReply, refusal: Refusal): FastifyReply {
  return reply.code(refusal.status).header('Retry-After', refusal.retryAfter).send({ detail: refusal.detail });
}

/**
 * For a handler of a `runsAhead` route, before it answers anything: waits for
 * the request's rate-limit decision when it is still pending. Returns true
 * when the request is admitted; otherwise sends the refusal and returns false.
 */
export async function admitted(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  // Nothing else to do meanwhile: a decision waiting for company goes now.
  if (request.admission) request.hurryAdmission?.();
  return settled(request, reply);
}

/** Waits for the request's pending decision (if any); sends the refusal and returns false when refused. */
async function settled(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const pending = request.admission;
  if (!pending) return true;
  request.admission = undefined;
  const refusal = await pending;
  if (!refusal) return true;
  sendRefusal(reply, refusal);
  return false;
}

/**
 * Starts `work` (upstream calls) at once and returns its result once the
 * request is admitted, or null after sending the refusal. With the decision
 * still pending, the limiter's database round trip overlaps the upstream
 * calls instead of preceding them; the work of a refused request finishes in
 * the background (its results still fill the cache) and is not counted.
 */
export async function runAhead<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  work: () => Promise<T>,
): Promise<{ value: T } | null> {
  const decision = request.admission;
  if (!decision) return { value: await work() };
  // The decision may wait a little for other requests to share its statement (batch.ts), but
  // never once the work is done.
  let decided = false;
  void decision.then(() => {
    decided = true;
  });
  const done = () => {
    if (!decided) request.hurryAdmission?.();
  };
  // A handler is attached at once: a rejection while the decision is pending is never unhandled.
  const running = work().then(
    (value) => {
      done();
      return { ok: true as const, value };
    },
    (error: unknown) => {
      done();
      return { ok: false as const, error };
    },
  );
  if (await settled(request, reply)) {
    const outcome = await running;
    if (outcome.ok) return { value: outcome.value };
    throw outcome.error;
  }
  void running.then((outcome) => {
    if (!outcome.ok) request.log.warn({ err: outcome.error }, 'work of a refused request failed');
  });
  return null;
}

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
  /** Whether each route (by its URL pattern: one entry per route) counts searches, decided on its first request. */
  const countingRoutes = new Map<string, boolean>();
  const countsSearches = (request: FastifyRequest): boolean => {
    const route = request.routeOptions.url;
    if (request.is404 || route === undefined) return false;
    let counts = countingRoutes.get(route);
    if (counts === undefined) {
      counts =
        route.startsWith(app.prefix) &&
        !UNCOUNTED_ENDPOINTS.has(route.slice(app.prefix.length).replace(/^\/+|\/+$/g, ''));
      countingRoutes.set(route, counts);
    }
    return counts;
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
  const hints = createRunAheadHints();
  const batcher = createAdmissionBatcher(app.pool, limits);
  // Unused leased slots go back before the usage is written and the pool closes.
  app.lifecycle.onFlush('rate-limit leases', () => batcher.releaseAll());

  app.addHook('onClose', async () => {
    clearInterval(prune);
    usage.stop();
    batcher.stop();
  });

  /** Checks and records the request against both limits and the quota: the refusal to send, or null. */
  async function decide(
    request: FastifyRequest,
    keyId: number,
    userId: number,
    quotaApplies: boolean,
    patient = false,
  ) {
    const now = new Date();
    const month = monthStart(now);
    let decision: RateDecision;
    try {
      decision = await batcher.admit(
        keyId,
        quotaApplies ? { userId, month } : undefined,
        patient,
        quotaApplies ? usage.epoch() : undefined,
      );
    } catch (err) {
      hints.settle(keyId, { rate: 0 });
      request.log.error({ err }, 'rate limiter unavailable');
      return UNAVAILABLE;
    }
    return judge(request, keyId, userId, decision, quotaApplies, now, true);
  }

  /**
   * The refusal to send for a decision, or null when the request may go on; `settle`: the decision
   * was asked of the database for a request that told the run-ahead hints it started.
   */
  function judge(
    request: FastifyRequest,
    keyId: number,
    userId: number,
    decision: RateDecision,
    quotaApplies: boolean,
    now: Date,
    settle: boolean,
  ): Refusal | null {
    request.rateLimit = decision;
    const rate = decision.admitted ? Math.min(decision.burst.remaining, decision.sustained.remaining) : 0;

    if (!decision.admitted) {
      if (settle) hints.settle(keyId, { rate });
      const wait = retryAfterSeconds(decision);
      return { status: 429, retryAfter: String(wait), detail: throttledDetail(wait) } satisfies Refusal;
    }
    if (!quotaApplies) {
      if (settle) hints.settle(keyId, quota > 0 ? { rate } : { rate, quotaUnits: Number.POSITIVE_INFINITY });
      return null;
    }
    const month = monthStart(now);
    const used = (decision.persistedSearches ?? 0) + usage.pending(userId, month);
    if (settle) hints.settle(keyId, { rate, quotaUnits: quota - used });
    if (used < quota) return null;
    const resets = nextMonthStart(now);
    const wait = Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000));
    return {
      status: 429,
      retryAfter: String(wait),
      detail: `Monthly search quota exhausted. It resets on ${monthStart(resets)}.`,
    } satisfies Refusal;
  }

  /** The checks that wait for the database: true when a refusal was sent. */
  async function admitFromDatabase(
    request: FastifyRequest,
    reply: FastifyReply,
    keyId: number,
    userId: number,
    quotaApplies: boolean,
  ): Promise<boolean> {
    const ahead = hints.ahead(keyId);
    // This request waits for that decision: it must not wait for company.
    if (ahead) batcher.hurry();
    // The decision waited for could not reach the database: asking again now would wait as long
    // again, so this request gets the same 503 (each API answer stays within one statement's bound).
    if (ahead && (await ahead) === UNAVAILABLE) {
      hints.settle(keyId, { rate: 0 });
      sendRefusal(reply, UNAVAILABLE);
      return true;
    }
    const refusal = await decide(request, keyId, userId, quotaApplies);
    if (!refusal) return false;
    sendRefusal(reply, refusal);
    return true;
  }

  // Callback-style hooks: the usual request (a lease, or a decision that runs ahead) passes
  // without a promise of its own; a refusal is sent and `done` not called.
  app.addHook('onRequest', (request, reply, done) => {
    const principal = request.apiKey;
    if (!principal) return done();
    // A busy key's next requests are admitted from the slots its instance holds (batch.ts): no round trip.
    const quotaApplies = quota > 0 && countsSearches(request);
    const leased = batcher.leased(principal.keyId, quotaApplies ? usage.epoch() : undefined, principal.userId);
    if (leased) {
      const refusal = judge(request, principal.keyId, principal.userId, leased, quotaApplies, new Date(), false);
      if (refusal) {
        sendRefusal(reply, refusal);
        return;
      }
      return done();
    }
    // A route's upstream calls may start before the decision only when this
    // instance knows the key has room (run-ahead.ts).
    if (hints.start(principal.keyId, request.routeOptions.config?.runsAhead === true)) {
      // Patient: the route's upstream calls start now, so the decision can wait for company (batch.ts).
      request.admission = decide(request, principal.keyId, principal.userId, quotaApplies, true);
      request.hurryAdmission = batcher.hurry;
      hints.ranAhead(principal.keyId, request.admission);
      return done();
    }
    admitFromDatabase(request, reply, principal.keyId, principal.userId, quotaApplies).then((refused) => {
      if (!refused) done();
    }, done);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    // Lower case, as Fastify stores header names (app.ts says why).
    reply.header('ratelimit-policy', policy);
    if (request.rateLimit) reply.header('ratelimit', rateLimitHeader(request.rateLimit));
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    const units = request.searchUnits;
    if (
      units &&
      units > 0 &&
      request.apiKey &&
      (reply.statusCode < 400 || (request.searchCountedBefore && reply.statusCode >= 500))
    ) {
      usage.add(request.apiKey.userId, units);
    }
    done();
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
  const { config, pool, usageRecorder, peers } = request.server;
  const userId = request.apiKey?.userId ?? 0;
  const now = new Date();
  // Other workers' buffered counts first (WORKERS > 1), so the figure holds searches they just answered.
  await peers?.flushUsage();
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
