/**
 * Work to run before the process stops: later modules register flushes of
 * their write-behind buffers (usage counters, health history) here.
 * Flushing is idempotent: each hook empties its own buffer.
 */
export type FlushHook = () => Promise<void> | void;

export interface Lifecycle {
  onFlush(name: string, hook: FlushHook): void;
  /** Runs every hook once, concurrently; a failing hook never stops the others. */
  flush(): Promise<{ name: string; error?: Error }[]>;
}

export function createLifecycle(): Lifecycle {
  const hooks: { name: string; hook: FlushHook }[] = [];
  return {
    onFlush(name, hook) {
      hooks.push({ name, hook });
    },
    async flush() {
      return Promise.all(
        hooks.map(async ({ name, hook }) => {
          try {
            await hook();
            return { name };
          } catch (error) {
            return { name, error: error as Error };
          }
        }),
      );
    },
  };
}
