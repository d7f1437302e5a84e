import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { buildOpenApiDocument, describedGet } from './openapi.js';

/** The body of GET /api/v1/schema/ (an OpenAPI 3.1 document; its full shape is OpenAPI's). */
export const openApiDocumentSchema = z
  .looseObject({
    openapi: z.string().meta({ description: 'OpenAPI version (3.1.x).' }),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.looseObject({})),
    components: z.looseObject({}),
  })
  .meta({ description: 'An OpenAPI 3.1 document.' });

/**
 * `GET /api/v1/schema/`: the OpenAPI 3.1 document of the API (openapi.ts),
 * generated from every operation registered under /api/v1/ at the first
 * request, then served as is. Key required, not counted as a search.
 */
export async function apiSchemaRoute(app: FastifyInstance): Promise<void> {
  let document: string | undefined;
  const handler = async (_request: FastifyRequest, reply: FastifyReply) => {
    document ??= JSON.stringify(buildOpenApiDocument(app.apiOperations ?? []));
    return reply.type('application/json; charset=utf-8').send(document);
  };
  describedGet(app, '/schema/', handler, {
    operationId: 'openApiDocument',
    summary: 'This OpenAPI document',
    description: 'The OpenAPI 3.1 document of the API. Not counted as a search.',
    response: openApiDocumentSchema,
  });
}
