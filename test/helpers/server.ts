import { type AddressInfo, createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Listens on an ephemeral loopback port and returns the base URL (http://127.0.0.1:PORT). */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A loopback port free right now (for a server started in another process). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
