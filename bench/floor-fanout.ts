/*
 * Floor 2: bare Fastify + undici fan-out to the same four fake engines with
 * Sift's own adapters and merge (src/search/web.ts), but no authentication,
 * rate limits, database, health recording or response cache.
 * Environment: the fakes' env (BRAVE_BASE_URL, BRAVE_API_KEY, …) as JSON in argv[2].
 */
import Fastify from 'fastify';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config/index.js';
import { createProviderDirectory } from '../src/providers/registry.js';
import type { ProviderCall, Upstream } from '../src/providers/types.js';
import type { SearchCache } from '../src/search/cache.js';
import { parseQuery, webQuerySchema } from '../src/search/params.js';
import { searchWeb } from '../src/search/web.js';

const config = parseConfig({ ...JSON.parse(process.argv[2] ?? '{}'), LOG_LEVEL: 'silent' });
const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 256 });

const upstream: Upstream = {
  async call<T>(call: ProviderCall<T>): Promise<T> {
    const res = await request(call.request.url, {
      method: call.request.method ?? 'GET',
      headers: call.request.headers,
      body: call.request.body,
      dispatcher,
      headersTimeout: 3000,
      bodyTimeout: 3000,
    });
    const body = await res.body.json();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`status ${res.statusCode}`);
    return call.parse(body);
  },
};
const providers = createProviderDirectory(config);
const noCache: SearchCache = {
  getOrFetch: (_key, _ttl, _size, fetch) => fetch(),
  has: () => false,
  clear: () => {},
  size: 0,
};

const app = Fastify({ logger: false });
app.get('/api/v1/web/', async (req, reply) => {
  const parsed = parseQuery(webQuerySchema, req.query);
  if (!parsed.ok) return reply.code(400).send(parsed.errors);
  const outcome = await searchWeb({ config, upstream, providers, cache: noCache }, parsed.value);
  return reply.code(outcome.status).send(outcome.body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
