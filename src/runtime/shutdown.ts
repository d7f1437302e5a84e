import type { FastifyInstance } from 'fastify';
import type { Lifecycle } from './lifecycle.js';

export interface ShutdownParts {
  app?: FastifyInstance;
  lifecycle: Lifecycle;
  closeDatabase?: () => Promise<void>;
  /** How long in-flight requests may take to finish. */
  drainTimeoutMs: number;
  log: { warn(msg: string): void; error(obj: unknown, msg: string): void };
}

/**
 * Stops accepting connections, lets in-flight requests finish (bounded),
 * runs the flush hooks, then closes the database.
 */
export async function shutdown(parts: ShutdownParts): Promise<void> {
  if (parts.app) {
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      parts.app.close().then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), parts.drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!drained) parts.log.warn(`in-flight requests did not finish within ${parts.drainTimeoutMs} ms`);
  }
  for (const result of await parts.lifecycle.flush()) {
    if (result.error) parts.log.error({ err: result.error, hook: result.name }, 'flush failed');
  }
  await parts.closeDatabase?.();
}
