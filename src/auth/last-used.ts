import type pg from 'pg';

const LAST_USED_INTERVAL_MS = 60_000;
/** After a last-used write, how long the keys used next wait to share one statement. */
const LAST_USED_BATCH_MS = 1000;
/** The most keys whose last write time is remembered (forgetting them at worst repeats a write). */
const MAX_REMEMBERED_KEYS = 10_000;

/**
 * Writes `last_used_at` at most once a minute per key, never on the response
 * path. A key's first use after a quiet second is written at once (the key's
 * page and GET /api/v1/key/ show it right after); the keys first used while
 * that write's LAST_USED_BATCH_MS window is open share one statement when it
 * closes, so a busy instance writes about once a second whatever its number
 * of keys. Failures are logged and forgotten. `flush()` writes what waits and
 * waits for the writes in flight.
 */
export function createLastUsedRecorder(pool: pg.Pool, onError: (err: unknown) => void) {
  /** When each key's last write was asked for (performance.now()): one look-up per request, no LRU bookkeeping. */
  const written = new Map<number, number>();
  /** Keys to write when the open window closes. */
  const waiting = new Set<number>();
  /** Set while a window is open: a write went less than LAST_USED_BATCH_MS ago. */
  let window: NodeJS.Timeout | null = null;
  const inFlight = new Set<Promise<void>>();

  /** Writes the waiting keys now and opens a window; with none waiting, the window stays shut. */
  function write(): void {
    if (window) clearTimeout(window);
    window = null;
    if (waiting.size === 0) return;
    const ids = [...waiting];
    waiting.clear();
    const sent = pool
      .query(
        `UPDATE api_keys SET last_used_at = now()
          WHERE id = ANY($1::bigint[]) AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')`,
        [ids],
      )
      .then(
        () => undefined,
        (err) => onError(err),
      )
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
    window = setTimeout(write, LAST_USED_BATCH_MS);
    window.unref();
  }

  return {
    touch(keyId: number): void {
      const now = performance.now();
      const last = written.get(keyId);
      if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return;
      // Bounded: forgetting every key at worst repeats a write per key (the UPDATE's own guard skips it).
      if (written.size >= MAX_REMEMBERED_KEYS) written.clear();
      written.set(keyId, now);
      waiting.add(keyId);
      if (!window) write();
    },
    async flush(): Promise<void> {
      write();
      await Promise.all([...inFlight]);
    },
  };
}
