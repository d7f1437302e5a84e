/*
 * Floor 1: a bare Fastify route returning a small JSON object — the ceiling
 * for any JSON endpoint of Sift on this machine (compared with /status/health).
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { status: 'ok', watched: 4, operational: 4, down: [], unknown: 0 };
app.get('/status/health', async (_req, reply) => {
  reply.header('Cache-Control', 'no-store');
  return body;
});
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
