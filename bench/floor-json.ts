/*
 * Floor 1: a bare Fastify route returning a small JSON object — the ceiling
 * for any JSON endpoint of Sift on this machine. Compared with
 * /status/health (same path), with the instant answers (served at
 * /api/v1/instant/, the query string ignored: an answer-sized constant), and
 * with an admitted `GET /api/v1/` (the same index, built by Sift's own
 * apiIndex, with no key, limits or database): the difference is the gate's cost.
 */
import Fastify from 'fastify';
import { apiIndex } from '../src/routes/api/root.js';

const app = Fastify({ logger: false });
const health = { status: 'ok', watched: 4, operational: 4, down: [], unknown: 0 };
app.get('/status/health', async (_req, reply) => {
  reply.header('Cache-Control', 'no-store');
  return health;
});
const answer = { query: '12 * 34', answer: { type: 'math', expression: '12 * 34', result: '408', query: '12 * 34' } };
app.get('/api/v1/instant/', async () => answer);
app.get('/api/v1/', async (request) => apiIndex(request, false));
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(
  `${JSON.stringify({ url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`,
);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
