import { readFileSync } from 'node:fs';
import fastifyPlugin from 'fastify-plugin';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport as Transport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { presentedKey } from '../auth/api-key-auth.js';
import { rateLimitHeader } from '../limits/headers.js';
import { IN_PROCESS_HEADERS } from '../metrics/in-process.js';
import { PROJECT_ROOT } from '../runtime/project-root.js';
import { renderError } from './render.js';
import { buildTool, firstResults, prepareCall, queryOf, TOOL_DEFINITIONS, type Tool } from './tools.js';

/*
 * MCP over Streamable HTTP at POST /mcp, stateless:
 * every HTTP request gets its own SDK server and transport (the SDK's
 * documented stateless pattern), answering in JSON (no SSE stream, no
 * session); GET and DELETE are 405.
 *
 * - Authentication: the API gate (gate/api-gate.ts: same keys, headers, 401/403/503).
 * - Each tool call is run as the REST request it stands for: a GET of its
 *   /api/v1/ endpoint through Fastify's inject, carrying the caller's key and
 *   address. That request passes the API's rate limits and monthly quota,
 *   its schema, its handler and its usage counting exactly as if the client
 *   had sent it, so nothing here re-implements (or can drift from) them; the
 *   cost is one in-process dispatch and a JSON re-parse per call, small
 *   beside the upstream calls.
 * - Every other message (initialize, tools/list, ping, notifications, each
 *   member of a batch) counts against the key's rate limits as one API request
 *   (`apiGate.charge`), never as a search; a batch holds at most
 *   MAX_BATCH_MESSAGES. A refusal is a JSON-RPC error (429 with Retry-After
 *   when throttled, 400 for a batch too large).
 * - A 200 is the tool's structured output, unchanged, with a short text; any
 *   other answer is a tool error (`isError`) saying which providers failed,
 *   what is not configured, which arguments are invalid or when to retry.
 */

const VERSION = (() => {
  try {
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0';
  } catch {
    return '0';
  }
})();

const INSTRUCTIONS =
  'Sift is a metasearch service: web, image, news and video search over several providers, suggestions, ' +
  "geocoding, translation, instant answers and knowledge cards. Each tool call counts toward the API key's " +
  'rate limits and monthly searches like the REST request it wraps. When a tool reports failed providers, ' +
  'the results are incomplete or missing: say so rather than concluding nothing exists.';

const HOW_TO_SEND_THE_KEY =
  'Send a Sift API key in the request headers: "Authorization: Api-Key svc_sk_…" (or "Bearer svc_sk_…", or "X-Api-Key: svc_sk_…"). ' +
  'Keys are issued by the Sift instance (its /settings/keys page); this server does not use OAuth.';

/** Headers the transport reads; nothing else of the client's request reaches the SDK. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

type Json = Record<string, unknown>;

/** The most messages a JSON-RPC batch may hold (the SDK's own bound is far above what a client sends). */
export const MAX_BATCH_MESSAGES = 10;

/** JSON-RPC's "Invalid Request", and the server-error code Sift answers a throttled message with. */
const INVALID_REQUEST = -32600;
const RATE_LIMITED = -32029;

/**
 * The messages of a POST body as the rate limits count them: every message but a tool call (which
 * counts as the REST request it runs), a body that is not JSON as one; null for a batch over
 * MAX_BATCH_MESSAGES.
 */
export function countedMessages(body: unknown): { batch: boolean; counted: number; id: unknown } | null {
  let parsed: unknown;
  try {
    parsed = typeof body === 'string' ? JSON.parse(body) : undefined;
  } catch {
    return { batch: false, counted: 1, id: null };
  }
  const isToolCall = (m: unknown) =>
    typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call';
  if (Array.isArray(parsed)) {
    if (parsed.length > MAX_BATCH_MESSAGES) return null;
    return { batch: true, counted: Math.max(1, parsed.filter((m) => !isToolCall(m)).length), id: null };
  }
  const id = typeof parsed === 'object' && parsed !== null ? ((parsed as { id?: unknown }).id ?? null) : null;
  return { batch: false, counted: isToolCall(parsed) ? 0 : 1, id };
}

/** A JSON-RPC error answer, with `detail` as every Sift error has it. */
function jsonRpcError(reply: FastifyReply, status: number, code: number, message: string, id: unknown = null) {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .send({ jsonrpc: '2.0', error: { code, message }, id, detail: message });
}

/*
 * The SDK takes about 100 ms to load, a fifth of the server's start: it is
 * loaded by the first /mcp request, or by loadMcpSdk() once the server
 * listens (app.ts), not with the server.
 */
const importSdk = async () => {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { ...server, ...transport, ...types };
};
let sdk: ReturnType<typeof importSdk> | undefined;

export function loadMcpSdk(): ReturnType<typeof importSdk> {
  sdk ??= importSdk();
  return sdk;
}

/**
 * An HTTP error of the transport (406, 415, 400 parse error…) as MCP clients read it (a JSON-RPC
 * error) and as every other Sift error reads (`detail`).
 */
function withDetail(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    const message = body.error?.message;
    if (typeof message === 'string') return JSON.stringify({ ...body, detail: message });
  } catch {
    /* not JSON: as is */
  }
  return text;
}

/*
 * The tools with their JSON Schemas (derived from zod: about 15 ms), made by the first MCP request
 * or by prepareMcpTools() once the server listens (app.ts), not with the server.
 */
type Catalogue = { tools: Map<string, Tool>; listing: Tool['listing'][] };
/** The catalogue with the page-contents tools and without (CONTENTS_ENABLED). */
const catalogues = new Map<boolean, Catalogue>();

export function prepareMcpTools(withContents = true): Catalogue {
  let catalogue = catalogues.get(withContents);
  if (!catalogue) {
    const definitions = TOOL_DEFINITIONS.filter((d) => withContents || !d.contents);
    const tools = new Map<string, Tool>(
      definitions.map((d) => [d.name, buildTool(withContents || !d.withoutContents ? d : d.withoutContents)]),
    );
    catalogue = { tools, listing: [...tools.values()].map((t) => t.listing) };
    catalogues.set(withContents, catalogue);
  }
  return catalogue;
}

async function mcpRoutesScope(app: FastifyInstance): Promise<void> {
  // Authenticated here; the messages are limited in the handler (each tool call as the REST request it runs).
  // A 401 says how to send the key, as a JSON-RPC error: an MCP client must not read it as the
  // start of an OAuth flow. The other refusals keep the gate's `{detail}`.
  app.apiGate.guard(app, {
    limited: false,
    refusal: (detail, status) => {
      if (status !== 401) return { detail };
      const message = `${detail} ${HOW_TO_SEND_THE_KEY}`;
      return { jsonrpc: '2.0', error: { code: -32001, message }, id: null, detail: message };
    },
  });
  // The transport reads the body itself: JSON-RPC parse errors and 415 in MCP's own form.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  /** Runs the tool's REST request as the caller and turns its answer into a tool result. */
  async function callTool(
    request: FastifyRequest,
    reply: FastifyReply,
    tool: Tool,
    given: Json,
  ): Promise<CallToolResult> {
    const prepared = prepareCall(tool, given);
    if (!prepared.ok) {
      return { isError: true, content: [{ type: 'text', text: renderError(400, prepared.errors, undefined) }] };
    }
    const key = presentedKey(request.headers) ?? '';
    const userAgent = request.headers['user-agent'];
    const res = await app.inject({
      method: 'GET',
      url: tool.definition.path + queryOf(tool, prepared.args),
      headers: {
        authorization: `Api-Key ${key}`,
        'x-request-id': request.id,
        ...(typeof userAgent === 'string' ? { 'user-agent': userAgent } : {}),
        ...IN_PROCESS_HEADERS,
      },
      remoteAddress: request.ip,
    });
    let body: unknown = null;
    try {
      body = res.json();
    } catch {
      body = { detail: res.body };
    }
    // The REST answer's rate-limit state, on the tool result and on the /mcp answer.
    const rate: Json = {};
    for (const name of ['ratelimit', 'ratelimit-policy']) {
      const value = res.headers[name];
      if (typeof value === 'string') {
        rate[`sift/${name}`] = value;
        reply.header(name, value);
      }
    }
    const meta = Object.keys(rate).length > 0 ? { _meta: rate } : {};
    if (res.statusCode === 200 && body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const shown = firstResults(body as Json, prepared.count);
      return {
        content: [{ type: 'text', text: tool.definition.render(shown) }],
        structuredContent: shown,
        ...meta,
      };
    }
    const retryAfter = res.headers['retry-after'];
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: renderError(res.statusCode, body, typeof retryAfter === 'string' ? retryAfter : undefined),
        },
      ],
      ...meta,
    };
  }

  async function createServer(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<{ server: Server; transport: Transport }> {
    const {
      Server,
      WebStandardStreamableHTTPServerTransport,
      CallToolRequestSchema,
      ErrorCode,
      ListToolsRequestSchema,
    } = await loadMcpSdk();
    // The low-level server: tools are listed with JSON Schemas derived from the endpoints' zod schemas and
    // validated by the endpoints themselves (McpServer would validate and transform the arguments first).
    const server = new Server(
      { name: 'sift', title: 'Sift', version: VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
    );
    const { tools, listing } = prepareMcpTools(app.contents !== null);
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => {
      const tool = tools.get(call.params.name);
      // A plain error with the code: McpError's message repeats "MCP error -32602:", which the
      // client adds again, so the reason would be said twice.
      if (!tool) throw Object.assign(new Error(`Unknown tool: ${call.params.name}`), { code: ErrorCode.InvalidParams });
      return callTool(request, reply, tool, (call.params.arguments ?? {}) as Json);
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    return { server, transport };
  }

  app.post('/mcp', async (request: FastifyRequest, reply: FastifyReply) => {
    const messages = countedMessages(request.body);
    if (!messages) {
      const message = `Invalid Request: a batch holds at most ${MAX_BATCH_MESSAGES} messages.`;
      return jsonRpcError(reply, 400, INVALID_REQUEST, message);
    }
    if (messages.counted > 0) {
      const charge = await app.apiGate.charge(request, messages.counted);
      if (charge.verdict !== 'admitted') {
        reply.header('Retry-After', String(charge.retryAfterSeconds));
        if (charge.verdict === 'unavailable') return jsonRpcError(reply, 503, -32000, charge.detail, messages.id);
        reply.header('RateLimit', rateLimitHeader(charge.rate));
        return jsonRpcError(reply, 429, RATE_LIMITED, charge.detail, messages.id);
      }
      if (charge.rate) reply.header('RateLimit', rateLimitHeader(charge.rate));
    }
    const { server, transport } = await createServer(request, reply);
    await server.connect(transport);
    try {
      const headers = new Headers();
      for (const name of TRANSPORT_HEADERS) {
        const value = request.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const body = typeof request.body === 'string' ? request.body : undefined;
      const response = await transport.handleRequest(
        new Request(`http://localhost${request.url}`, { method: 'POST', headers, body }),
      );
      const text = await response.text();
      reply.code(response.status).header('Cache-Control', 'no-store');
      response.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      return reply.send(response.status >= 400 ? withDetail(text) : text === '' ? undefined : text);
    } finally {
      await server.close();
    }
  });

  // Stateless: no standalone SSE stream to open (GET), no session to end (DELETE).
  const notAllowed = async (request: FastifyRequest, reply: FastifyReply) => {
    const message = `Method "${request.method}" not allowed.`;
    return reply
      .code(405)
      .header('Allow', 'POST')
      .send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null, detail: message });
  };
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}

/** Registered by the app (app.ts) after the services it uses, which Fastify checks by name. */
export const mcpRoutes = fastifyPlugin(mcpRoutesScope, {
  name: 'sift-mcp',
  encapsulate: true,
  dependencies: ['sift-upstream', 'sift-contents', 'sift-gate'],
});
