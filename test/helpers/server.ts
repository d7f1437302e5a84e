import { type ChildProcess, spawn } from 'node:child_process';
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

/** A server process (src/server.ts through tsx) and what it has written so far. */
export interface ServerProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr. */
  output: () => string;
  /** Its JSON log lines, parsed. */
  lines: () => Record<string, unknown>[];
  exited: Promise<number | null>;
}

/** Starts src/server.ts through tsx with `env` (whole: pass process.env in it), not waiting for it. */
export function spawnServerProcess(env: NodeJS.ProcessEnv): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const lines = () =>
    output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, output: () => output, lines, exited };
}
