import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Listens on an ephemeral loopback port and returns the base URL (http://127.0.0.1:PORT). */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}
