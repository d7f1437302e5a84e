import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/*
 * Requests the app dispatches to itself (an MCP tool call runs as its REST request through
 * Fastify's inject) are part of the HTTP request that caused them, so the request metrics count
 * that one only. They carry a header whose value is drawn when the process starts: a client
 * cannot guess it, and it never leaves the process.
 */

const HEADER = 'x-sift-in-process';
const MARK = randomUUID();

/** The header marking a request dispatched by the app to itself. */
export const IN_PROCESS_HEADERS: Readonly<Record<string, string>> = { [HEADER]: MARK };

/** True for a request the app dispatched to itself (with IN_PROCESS_HEADERS). */
export function isInProcessRequest(request: FastifyRequest): boolean {
  return request.headers[HEADER] === MARK;
}
