import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INVALID_KEY, UNAVAILABLE } from '../../auth/api-key-auth.js';
import { type ApiKeyRecord, findApiKeyById } from '../../auth/api-keys.js';
import { describeApiKey } from '../../auth/key-info.js';
import { keyUsageAndLimits } from '../../limits/api-limits.js';

/** `GET /api/v1/key/`: the key making the request (never its secret). */
export async function apiKeyRoute(app: FastifyInstance): Promise<void> {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let record: ApiKeyRecord | null;
    let usageAndLimits: Awaited<ReturnType<typeof keyUsageAndLimits>>;
    try {
      [record, usageAndLimits] = await Promise.all([
        findApiKeyById(app.pool, request.apiKey!.keyId),
        keyUsageAndLimits(request),
      ]);
    } catch (err) {
      request.log.warn({ err }, 'could not read the API key');
      return reply.code(503).header('Retry-After', '5').send({ detail: UNAVAILABLE });
    }
    if (!record) return reply.code(401).header('WWW-Authenticate', 'Api-Key').send({ detail: INVALID_KEY });
    return { ...describeApiKey(record), ...usageAndLimits };
  };
  app.get('/key/', handler);
  app.get('/key', handler);
}
