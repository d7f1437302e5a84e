/*
 * Statements that lock several rows take them in one global order (docs/architecture.md), so two of
 * ours never deadlock each other; a statement that still loses a deadlock (a concurrent statement
 * outside that order, plain SQL of an operator) is run again, a few times, at once: the winner has
 * committed or is about to, and the loser's transaction was rolled back whole.
 */

const DEADLOCK_DETECTED = '40P01';
const SERIALIZATION_FAILURE = '40001';
const ATTEMPTS = 3;

function lostToAnother(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === DEADLOCK_DETECTED || code === SERIALIZATION_FAILURE;
}

/** Runs `statement`, again when it lost a deadlock (up to three times in all). */
export async function retryingDeadlocks<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      if (attempt >= ATTEMPTS || !lostToAnother(err)) throw err;
    }
  }
}
