import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { INVALID_KEY, UNAVAILABLE } from '../../auth/api-key-auth.js';
import { type ApiKeyRecord, findApiKeyById } from '../../auth/api-keys.js';
import { describeApiKey, type KeyInfo } from '../../auth/key-info.js';
import type { Rate } from '../../config/index.js';
import { admittedCall } from '../../gate/api-gate.js';
import { nextMonthStart } from '../../limits/month.js';
import { monthUsage } from '../../limits/usage.js';
import type { Check, Same } from '../../search/response-schemas.js';
import { describedGet } from './openapi.js';

const keyLimitSchema = z.object({
  limit: z.number().int(),
  window_seconds: z.number().int(),
  remaining: z.number().int().meta({ description: 'What remains after this request.' }),
});

/** The body of GET /api/v1/key/. */
export const keyResponseSchema = z.object({
  name: z.string(),
  prefix: z.string().meta({ description: 'The public part of the key: `svc_sk_xxxxxxxx`.' }),
  created_at: z.string().meta({ description: 'ISO 8601 UTC.' }),
  last_used_at: z.string().nullable().meta({ description: 'ISO 8601 UTC, or null.' }),
  revoked: z.boolean(),
  usage: z.object({
    month: z.string().meta({ description: '`YYYY-MM`, UTC.' }),
    searches: z.number().int().meta({ description: "This month's searches of the key's user." }),
    quota: z.number().int().nullable().meta({ description: 'The monthly quota, or null when unlimited.' }),
    resets_at: z.string().meta({ description: 'When the count starts again: the next UTC month, ISO 8601.' }),
  }),
  limits: z.object({ burst: keyLimitSchema, sustained: keyLimitSchema }),
});

interface KeyUsage {
  month: string;
  searches: number;
  quota: number | null;
  resets_at: string;
}

interface KeyLimit {
  limit: number;
  window_seconds: number;
  remaining: number;
}

/**
 * The `usage` and `limits` members: this month's searches of the key's user (exact: searches are
 * counted as they are admitted) and both rate limits with what remains after this request.
 */
async function keyUsageAndLimits(
  request: FastifyRequest,
): Promise<{ usage: KeyUsage; limits: { burst: KeyLimit; sustained: KeyLimit } }> {
  const { config, pool } = request.server;
  const call = admittedCall(request);
  // The month the database counts in now, as admissions do (never this machine's clock).
  const { month, searches } = await monthUsage(pool, call.principal.userId);
  const limit = (rate: Rate, remaining: number | undefined): KeyLimit => ({
    limit: rate.limit,
    window_seconds: rate.windowSeconds,
    remaining: remaining ?? rate.limit,
  });
  return {
    usage: {
      month: month.slice(0, 7),
      searches,
      quota: config.API_MONTHLY_QUOTA > 0 ? config.API_MONTHLY_QUOTA : null,
      resets_at: nextMonthStart(new Date(`${month}T00:00:00Z`))
        .toISOString()
        .replace('.000Z', 'Z'),
    },
    limits: {
      burst: limit(config.API_THROTTLE_BURST, call.rate?.burst.remaining),
      sustained: limit(config.API_THROTTLE_SUSTAINED, call.rate?.sustained.remaining),
    },
  };
}

/** Compile-time: the schema describes exactly what the handler answers. */
export type _KeyResponseCheck = Check<
  Same<z.output<typeof keyResponseSchema>, KeyInfo & Awaited<ReturnType<typeof keyUsageAndLimits>>>
>;

/** `GET /api/v1/key/`: the key making the request (never its secret). */
export async function apiKeyRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let record: ApiKeyRecord | null;
    let usageAndLimits: Awaited<ReturnType<typeof keyUsageAndLimits>>;
    try {
      [record, usageAndLimits] = await Promise.all([
        findApiKeyById(app.pool, admittedCall(request).principal.keyId),
        keyUsageAndLimits(request),
      ]);
    } catch (err) {
      request.log.warn({ err }, 'could not read the API key');
      return reply.code(503).header('Retry-After', '5').send({ detail: UNAVAILABLE });
    }
    if (!record) return reply.code(401).header('WWW-Authenticate', 'Api-Key').send({ detail: INVALID_KEY });
    return { ...describeApiKey(record), ...usageAndLimits };
  };
  describedGet(app, '/key/', handler, {
    operationId: 'key',
    summary: 'The key making the request',
    description: "The key (never its secret), this month's usage and the rate limits. Not counted as a search.",
    response: keyResponseSchema,
  });
}
