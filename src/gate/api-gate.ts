import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import {
  type ApiKeyAuthenticator,
  INVALID_KEY,
  type Identity,
  NOT_PROVIDED,
  presentedKey,
  UNAVAILABLE,
  USER_DISABLED,
} from '../auth/api-key-auth.js';
import { listenForKeyChanges } from '../auth/key-changes.js';
import { createLastUsedRecorder } from '../auth/last-used.js';
import type { ApiPrincipal } from '../auth/types.js';
import type { AdmissionSettings, Decided, RateDecision } from '../limits/admission.js';
import { rateLimitHeader, rateLimitPolicy, retryAfterSeconds, throttledDetail } from '../limits/headers.js';
import { createUsageLedger, PRUNE_INTERVAL_MS, type UsageTicket } from '../limits/ledger.js';
import { monthStart, nextMonthStart } from '../limits/month.js';
import type { CallerContext } from '../upstream/caller.js';

/*
 * The gate every API request passes: REST under /api/v1/, MCP, and every other API a client may
 * speak. Its whole path, in order:
 *
 * 1. Identify the key (`presentedKey`: `Authorization: Api-Key|Bearer <key>` or `X-Api-Key`) from
 *    this process's cache where it can (auth/api-key-auth.ts). No key, a malformed one, or one the
 *    cache knows to be bad: 401 or 403 at once, before anything else is looked at.
 * 2. Plan: the route says whether it counts searches and how many this request would count
 *    (`config.apiGate`; search routes parse their parameters here, see routes/api/search-route.ts).
 * 3. Admit: one statement decides the burst and sustained limits and the monthly quota, reserving
 *    the request's searches in the usage ledger; a key not cached is looked up by the same
 *    statement (limits/ledger.ts, limits/admission.ts). Refused: 429 with Retry-After; database
 *    unreachable: 503.
 * 4. Run: the route's handler, with `request.apiCall`; the features it runs make their upstream
 *    calls for the request's caller (`upstreamFor`, routes/feature-deps.ts).
 * 5. Count: the answer tells the ledger how many of the reserved searches count: none for an
 *    error, fewer than reserved when the route kept less (`chargeOnly`, `giveBack`); the others
 *    are given back (limits/ledger.ts), but on a 400 the upstream calls that refused the caller's own value (the
 *    upstream counted them). The key's last use is written behind (auth/last-used.ts).
 *
 * Parameter validation comes after admission, so a 401 or a 429 never becomes a 400.
 */

/** What a route tells the gate about a request before it is admitted; `P`: what it parsed to plan. */
export interface GatePlan<P = unknown> {
  /** The endpoint counts searches: the monthly quota applies. */
  metered: boolean;
  /** Searches this request counts when it succeeds. */
  units: number;
  /** Also counted when the answer is a 5xx (translation counts as the backend is asked). */
  countsOnServerError?: boolean;
  /** What the route worked out to plan (its parsed parameters), for its handler (`gatedRoute`). */
  parsed?: P;
}

/** Why the gate refused a request. */
export type GateRefusal = 'unauthenticated' | 'forbidden' | 'rate' | 'quota' | 'unavailable';

/** The state of one API request at the gate: the only field the gate sets on a request. */
export type ApiCall =
  | {
      outcome: 'admitted';
      principal: ApiPrincipal;
      plan: GatePlan;
      /** The searches reserved at admission: `plan.units` may be lowered by `chargeOnly`, never raised. */
      reserved: number;
      /** The rate windows after this request; null for a request not rate-limited. */
      rate: RateDecision | null;
      /** What the request reserved in the usage ledger (null: nothing). */
      ticket: UsageTicket | null;
      /** The user's searches this month after this request, when the statement read them. */
      searchesThisMonth: number | null;
      /** Searches of a counted answer that it gives back (`ApiGate.giveBack`: the pages that failed). */
      givenBack?: number;
      /** Whom the handler's upstream calls are made for (their share of budgets, calls refused yet counted). */
      caller: CallerContext;
    }
  | {
      outcome: GateRefusal;
      /** The rate windows' verdict when the limits were decided (for the RateLimit header). */
      rate: RateDecision | null;
    };

export type AdmittedCall = Extract<ApiCall, { outcome: 'admitted' }>;

/** The admitted call of a request a route handles (the gate sends every refusal before any handler). */
export function admittedCall(request: FastifyRequest): AdmittedCall {
  const call = request.apiCall;
  if (call?.outcome !== 'admitted') throw new Error('the API gate did not admit this request');
  return call;
}

/**
 * Lowers what an admitted request counts to `units` (never above what it reserved): for a request
 * whose price is known only once its body is read (a SearXNG POST reserves the most a search can
 * cost). The gate gives the difference back with the answer.
 */
export function chargeOnly(request: FastifyRequest, units: number): void {
  const call = admittedCall(request);
  call.plan = { ...call.plan, units: Math.max(0, Math.min(call.reserved, units)) };
}

/** A route of a gated scope whose plan parses what its handler then takes, typed alike. */
export interface GatedRoute<P> {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  /** The route's plan for a request (run by the gate before admission, when the scope is limited). */
  plan(request: FastifyRequest): GatePlan<P>;
  /** The handler, given what the plan parsed (undefined when the plan parsed nothing, or did not run). */
  handler(request: FastifyRequest, reply: FastifyReply, planned: P | undefined): unknown;
}

/** Registers a route whose handler receives its own plan's parsed parameters. */
export function gatedRoute<P>(scope: FastifyInstance, route: GatedRoute<P>): void {
  scope.route({
    method: route.method,
    url: route.url,
    config: { apiGate: route.plan },
    handler(request, reply) {
      const call = request.apiCall;
      // The plan of this very route set it: its type is P.
      const planned = call?.outcome === 'admitted' ? (call.plan.parsed as P | undefined) : undefined;
      return route.handler(request, reply, planned);
    },
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the gate on every API request it decides. */
    apiCall?: ApiCall;
  }
  interface FastifyContextConfig {
    /** The route's plan for a request (default: counts no searches). */
    apiGate?: (request: FastifyRequest) => GatePlan;
  }
}

export interface GateOptions {
  /** Requests count against the rate limits and quota (false: authentication only, MCP protocol messages). */
  limited: boolean;
  /**
   * Where a request of this scope presents its key (default `presentedKey`: the Authorization and
   * X-Api-Key headers). A scope for clients that cannot send those (a key in the base URL, HTTP
   * Basic auth) reads them too.
   */
  presented?: (request: FastifyRequest) => string | null;
  /** The body of a refusal (401, 403, 429, 503) in the door's own error shape (default `{detail}`). */
  refusal?: (detail: string, status: number) => Record<string, unknown>;
}

/** What charging an admitted call with more requests decided (`charge`). */
export type Charge =
  | { verdict: 'admitted'; rate: RateDecision | null }
  | { verdict: 'throttled'; rate: RateDecision; retryAfterSeconds: number; detail: string }
  | { verdict: 'unavailable'; retryAfterSeconds: number; detail: string };

export interface ApiGate {
  /** Adds the gate's hooks to a scope: every route of it, and its 404 handler. */
  guard(scope: FastifyInstance, options: GateOptions): void;
  /**
   * Reserves `units` more searches for an admitted request, against the monthly quota only (its
   * rate was decided at admission): for a POST whose count is known once its body is read.
   * 'quota': the quota does not hold them (nothing reserved); 'unavailable': the database is away.
   */
  reserve(request: FastifyRequest, units: number): Promise<'ok' | 'quota' | 'unavailable'>;
  /** Gives back `units` of a request's searches even though its answer counts (the pages that failed). */
  giveBack(request: FastifyRequest, units: number): void;
  /**
   * Counts `count` more requests of an admitted call against its key's rate limits, as that many
   * API requests would be (MCP's protocol messages, each of a batch): throttled when a window
   * is full. No search is counted.
   */
  charge(request: FastifyRequest, count: number): Promise<Charge>;
}

const UNMETERED: GatePlan = { metered: false, units: 0 };
/** Seconds a client is asked to wait when the database is unreachable. */
const UNAVAILABLE_RETRY_AFTER = '5';

export interface ApiGateDeps {
  /** The key cache the gate identifies keys with (the pages that revoke a key tell it too). */
  authenticator: ApiKeyAuthenticator;
  /** The time the gate decides at (ms since the epoch; tests move it); default the database's clock. */
  clock?: AdmissionSettings['clock'];
}

/** The gate's services for one app: admissions, refunds, last-used writes, with the key cache it is given. */
export function createApiGate(app: FastifyInstance, { authenticator, clock }: ApiGateDeps): ApiGate {
  const { config, pool } = app;
  const limits = { burst: config.API_THROTTLE_BURST, sustained: config.API_THROTTLE_SUSTAINED };
  const policy = rateLimitPolicy(limits);
  const ledger = createUsageLedger(
    pool,
    { limits, monthlyQuota: config.API_MONTHLY_QUOTA, clock },
    {
      onSettleError: (err) => app.log.warn({ err }, 'could not settle usage receipts; will retry'),
      onConflictRetry: (err) =>
        app.log.info({ err }, 'a usage ledger statement lost a lock conflict; running it again'),
    },
  );
  const lastUsed = createLastUsedRecorder(pool, (err) =>
    app.log.warn({ err }, 'could not record when an API key was last used'),
  );
  const changes = listenForKeyChanges(pool, authenticator, { log: app.log });
  const prune = setInterval(() => {
    ledger.prune().catch((err: Error) => app.log.warn({ err }, 'usage ledger prune failed'));
  }, PRUNE_INTERVAL_MS);
  prune.unref();
  app.lifecycle.onFlush('api-key-last-used', () => lastUsed.flush());
  app.lifecycle.onFlush('usage ledger', () => ledger.flush());
  app.addHook('onClose', async () => {
    clearInterval(prune);
    ledger.stop();
    await changes.close();
  });

  /** The latest admission failed for want of the database. */
  let databaseAway = false;

  const refuse = (
    request: FastifyRequest,
    reply: FastifyReply,
    shape: GateOptions['refusal'],
    why: GateRefusal,
    status: number,
    detail: string,
    rate: RateDecision | null = null,
  ) => {
    request.apiCall = { outcome: why, rate };
    if (status === 401) reply.header('WWW-Authenticate', 'Api-Key');
    return reply.code(status).send(shape ? shape(detail, status) : { detail });
  };

  /** Sets `request.apiCall` and returns undefined, or sends the refusal and returns the reply (Fastify then stops). */
  async function pass(
    request: FastifyRequest,
    reply: FastifyReply,
    options: GateOptions,
  ): Promise<FastifyReply | undefined> {
    const presented = options.presented ? options.presented(request) : presentedKey(request.headers);
    const identity: Identity = authenticator.identify(presented);
    if (identity.kind === 'not-provided')
      return refuse(request, reply, options.refusal, 'unauthenticated', 401, NOT_PROVIDED);
    if (identity.kind === 'invalid')
      return refuse(request, reply, options.refusal, 'unauthenticated', 401, INVALID_KEY);
    if (identity.kind === 'disabled') return refuse(request, reply, options.refusal, 'forbidden', 403, USER_DISABLED);
    const plan = options.limited ? (request.routeOptions.config?.apiGate?.(request) ?? UNMETERED) : UNMETERED;
    if (identity.kind === 'ok' && !options.limited) {
      request.apiCall = {
        outcome: 'admitted',
        principal: identity.principal,
        plan,
        reserved: plan.units,
        rate: null,
        searchesThisMonth: null,
        ticket: null,
        caller: { userId: identity.principal.userId, refusedCalls: 0 },
      };
      return undefined;
    }

    let decided: Awaited<ReturnType<typeof ledger.reserve>>;
    try {
      decided = await ledger.reserve({
        key:
          identity.kind === 'ok'
            ? { keyId: identity.principal.keyId, userId: identity.principal.userId }
            : { prefix: identity.prefix, secretHash: identity.secretHash },
        limited: options.limited,
        metered: plan.metered,
        units: plan.units,
      });
    } catch (err) {
      // Once per outage, not once per refused request.
      if (!databaseAway) request.log.warn({ err }, 'the API gate cannot reach the database: answering 503');
      databaseAway = true;
      reply.header('Retry-After', UNAVAILABLE_RETRY_AFTER);
      return refuse(request, reply, options.refusal, 'unavailable', 503, UNAVAILABLE);
    }
    if (databaseAway) {
      databaseAway = false;
      request.log.info('the API gate reaches the database again');
    }
    if (identity.kind === 'unknown') authenticator.remember(identity, decided.row ?? null);

    const admission = decided.admission;
    switch (admission.verdict) {
      case 'invalid-key':
        return refuse(request, reply, options.refusal, 'unauthenticated', 401, INVALID_KEY);
      case 'disabled-user':
        return refuse(request, reply, options.refusal, 'forbidden', 403, USER_DISABLED);
      case 'throttled': {
        const wait = retryAfterSeconds(admission.rate);
        reply.header('Retry-After', String(wait));
        return refuse(request, reply, options.refusal, 'rate', 429, throttledDetail(wait), admission.rate);
      }
      case 'quota-exhausted': {
        const now = new Date(clock?.() ?? Date.now());
        // The month the database counted in, not this machine's: their clocks may differ.
        const resets = nextMonthStart(new Date(`${decided.month}T00:00:00Z`));
        reply.header('Retry-After', String(Math.max(1, Math.ceil((resets.getTime() - now.getTime()) / 1000))));
        const left = config.API_MONTHLY_QUOTA - admission.searchesThisMonth;
        const short =
          left > 0 ? `: ${left} ${left === 1 ? 'search' : 'searches'} left, this request needs ${plan.units}` : '';
        return refuse(
          request,
          reply,
          options.refusal,
          'quota',
          429,
          `Monthly search quota exhausted${short}. It resets on ${monthStart(resets)}.`,
          admission.rate,
        );
      }
      case 'admitted': {
        const principal =
          identity.kind === 'ok'
            ? identity.principal
            : {
                keyId: decided.keyId!,
                prefix: identity.prefix,
                userId: decided.userId!,
                username: decided.row?.username ?? '',
              };
        request.apiCall = {
          outcome: 'admitted',
          principal,
          plan,
          reserved: plan.units,
          rate: admission.rate,
          searchesThisMonth: admission.searchesThisMonth,
          ticket: decided.ticket,
          caller: { userId: principal.userId, refusedCalls: 0 },
        };
        return undefined;
      }
    }
  }

  /** Whether an answer with this status counts the searches its request reserved. */
  const counts = (plan: GatePlan, status: number) =>
    status < 400 || (plan.countsOnServerError === true && status >= 500);

  /** Tells the ledger, once, whether the request's reserved searches count. */
  const answered = (request: FastifyRequest, status: number) => {
    const call = request.apiCall;
    if (call?.outcome !== 'admitted' || !call.ticket) return;
    // What the route kept: all it reserved (reserve more included), less what chargeOnly lowered and
    // the pages giveBack returned.
    const kept = call.ticket.units - (call.reserved - call.plan.units) - (call.givenBack ?? 0);
    // A 400 still pays for the upstream calls that refused the caller's own value: they were counted.
    const counted = counts(call.plan, status) ? kept : status === 400 ? Math.min(kept, call.caller.refusedCalls) : 0;
    ledger.answered(call.ticket, counted);
    call.ticket = null;
  };

  return {
    async reserve(request, units) {
      const call = request.apiCall;
      if (call?.outcome !== 'admitted') throw new Error('the API gate did not admit this request');
      if (units <= 0 || !call.ticket) return 'ok';
      try {
        return (await ledger.reserveMore(call.ticket, units, config.API_MONTHLY_QUOTA)) ? 'ok' : 'quota';
      } catch {
        return 'unavailable';
      }
    },
    giveBack(request, units) {
      const call = request.apiCall;
      if (call?.outcome !== 'admitted' || units <= 0) return;
      call.givenBack = (call.givenBack ?? 0) + units;
    },
    async charge(request, count) {
      const { principal } = admittedCall(request);
      const key = { keyId: principal.keyId, userId: principal.userId };
      let decided: Decided[];
      try {
        decided = await Promise.all(
          Array.from({ length: count }, () => ledger.reserve({ key, limited: true, metered: false, units: 0 })),
        );
      } catch (err) {
        if (!databaseAway) request.log.warn({ err }, 'the API gate cannot reach the database: answering 503');
        databaseAway = true;
        return { verdict: 'unavailable', retryAfterSeconds: Number(UNAVAILABLE_RETRY_AFTER), detail: UNAVAILABLE };
      }
      let rate: RateDecision | null = null;
      for (const { admission } of decided) {
        if (admission.verdict === 'throttled') {
          const wait = retryAfterSeconds(admission.rate);
          return { verdict: 'throttled', rate: admission.rate, retryAfterSeconds: wait, detail: throttledDetail(wait) };
        }
        if (admission.verdict === 'admitted') rate = admission.rate;
      }
      return { verdict: 'admitted', rate };
    },
    guard(scope, options) {
      scope.addHook('onRequest', async (request, reply) => {
        const refused = await pass(request, reply, options);
        // A client that goes away before its answer is sent: its request counts as the status it
        // had then (onResponse does not run for it).
        if (!refused) reply.raw.once('close', () => answered(request, reply.statusCode));
        return refused;
      });
      if (options.limited) {
        scope.addHook('onSend', (request, reply, payload, done) => {
          reply.header('RateLimit-Policy', policy);
          const rate = request.apiCall?.rate;
          if (rate) reply.header('RateLimit', rateLimitHeader(rate));
          done(null, payload);
        });
      }
      scope.addHook('onResponse', (request, reply, done) => {
        const call = request.apiCall;
        if (call?.outcome === 'admitted') {
          lastUsed.touch(call.principal.keyId);
          answered(request, reply.statusCode);
        }
        done();
      });
    },
  };
}
