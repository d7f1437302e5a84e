import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type StatusRow, healthOf, isoOrNull } from '../../providers/health-store.js';
import { GROUPS, PROVIDER_SLUGS } from '../../providers/registry.js';
import type { LimitsView } from '../../providers/pacing/limits-view.js';
import { describeRoute } from './openapi.js';

function limitsField(view: LimitsView | undefined): { limits?: z.output<typeof limitsSchema> } {
  if (!view) return {};
  return {
    limits: {
      rate_per_second: view.ratePerSecond,
      concurrency: view.concurrency,
      budget: view.budget && {
        period: view.budget.period,
        limit: view.budget.limit,
        used: view.budget.used,
        resets_at: view.budget.resetsAt.toISOString(),
      },
      upstream: view.upstream && {
        limit: view.upstream.limit,
        remaining: view.upstream.remaining,
        resets_at: isoOrNull(view.upstream.resetsAt),
        reported_at: view.upstream.reportedAt.toISOString(),
      },
      terms: view.terms,
    },
  };
}

export const STATUS_NOT_PUBLISHED = 'Provider status is not published on this instance.';

const limitsSchema = z.object({
  rate_per_second: z
    .number()
    .nullable()
    .meta({ description: 'Calls a second Sift allows across the deployment; null: no rate.' }),
  concurrency: z.number().int().nullable().meta({ description: 'Calls in flight at once at most; null: no bound.' }),
  budget: z
    .object({
      period: z.enum(['month', 'day']),
      limit: z.number().int(),
      used: z.number().int().meta({ description: 'Calls made this period (UTC), by every instance.' }),
      resets_at: z.string().meta({ description: 'ISO 8601 UTC: when the period ends.' }),
    })
    .nullable()
    .meta({ description: 'The budget of calls Sift keeps to; null: none.' }),
  upstream: z
    .object({
      limit: z.number().int(),
      remaining: z.number().int(),
      resets_at: z.string().nullable(),
      reported_at: z.string(),
    })
    .nullable()
    .meta({ description: "The upstream's own count for its long window (a month), as its last answer reported it." }),
  terms: z.string().meta({ description: "Where the default terms in force are published ('' when none is)." }),
});

/** The body of GET /api/v1/status/ (spec 2.10). */
export const statusResponseSchema = z.object({
  providers: z.array(
    z.object({
      slug: z.enum(PROVIDER_SLUGS),
      name: z.string().meta({ description: 'Display name.' }),
      group: z.enum(GROUPS.map((g) => g.key)),
      monitor: z.enum(['query', 'probe']).meta({
        description: 'How the state is established: from real searches (`query`) or an active check (`probe`).',
      }),
      state: z.enum(['up', 'down', 'unknown']).meta({ description: '`unknown`: nothing observed yet.' }),
      checked_at: z.string().nullable().meta({ description: 'ISO 8601 UTC; null when never observed.' }),
      last_ok_at: z.string().nullable().meta({ description: 'ISO 8601 UTC of the last success, or null.' }),
      last_error: z.string().meta({ description: 'Upstream error text, may be empty.' }),
      source: z.string().meta({ description: 'Where the last observation came from: `query`, `probe`, or "".' }),
      limits: limitsSchema.optional().meta({
        description:
          'What paces and budgets the provider (docs/configuration.md, Upstream terms); absent when nothing does.',
      }),
    }),
  ),
});

type StatusResponse = z.output<typeof statusResponseSchema>;

/**
 * `GET /api/v1/status/`: one record per configured provider, in registry
 * order (spec 2.10). Unlike the monitor endpoints it includes last_error.
 * A database that cannot be read degrades every provider to unknown.
 */
export async function apiStatusRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!app.config.STATUS_PAGE_ENABLED) return reply.code(404).send({ detail: STATUS_NOT_PUBLISHED });
    let rows = new Map<string, StatusRow>();
    try {
      rows = await app.health.reader.rows();
    } catch (err) {
      request.log.warn({ err }, 'provider status: database unavailable, reporting unknown');
    }
    let limits = new Map<string, LimitsView>();
    try {
      limits = await app.health.limits();
    } catch (err) {
      request.log.warn({ err }, 'provider limits: database unavailable, left out');
    }
    const configured = app.providers.configured();
    const health = healthOf(configured, rows);
    const body: StatusResponse = {
      providers: configured.map((p, i) => {
        const h = health[i]!;
        return {
          slug: p.slug,
          name: p.name,
          group: p.group,
          monitor: p.monitor,
          state: h.state,
          checked_at: isoOrNull(h.checkedAt),
          last_ok_at: isoOrNull(h.lastOkAt),
          last_error: h.lastError,
          source: h.source,
          ...limitsField(limits.get(p.slug)),
        };
      }),
    };
    return reply.header('Cache-Control', 'no-store').send(body);
  };
  describeRoute(app, {
    path: '/status/',
    methods: ['GET'],
    doc: {
      operationId: 'providerStatus',
      summary: 'Provider status',
      description: 'One record per configured provider, in registry order. Not counted as a search.',
      response: statusResponseSchema,
      headers: { 'Cache-Control': 'Always `no-store`.' },
      errors: { 404: STATUS_NOT_PUBLISHED },
    },
  });
  app.get('/status/', handler);
  app.get('/status', handler);
}
