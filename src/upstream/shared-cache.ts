import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { withQueryTimeout } from '../db/pool.js';
import type { ProviderSlug } from '../providers/types.js';

/*
 * The second level of the response cache, shared by every worker and
 * instance on the database (upstream_cache, migrations/0013_baseline.sql): an answer one
 * process fetched is served to all for its provider's TTL, and identical
 * calls in flight at the same time on different processes are made once
 * (upstream_flights: the first to claim a key fetches it, the others wait
 * for its answer, and take over if it fails or its holder dies).
 *
 * Behind the per-process cache (cache.ts), which already makes one call per
 * key per process; this level costs one lookup statement per miss there, and
 * the lookups and stores that arrive together share one statement each.
 * An entry goes when the process that fetched it stops (close), so a
 * restarted deployment starts cold as it always did. A process alone on its
 * database (one process, one instance: upstream_cache_members, renewed every
 * few seconds) has nobody to share with: it keeps to its own cache and makes
 * no statement for it.
 * Only successes are stored, as JSON, under the SHA-256 of the runner's key
 * (which never holds a secret); a value whose JSON carries a configured
 * secret, or that is larger than MAX_VALUE_BYTES, is not shared.
 */

export interface SharedCache {
  /** The shared value of `key`, or the value `fetch` gives (then shared for `ttlMs`). */
  getOrFetch<T>(key: string, provider: ProviderSlug, ttlMs: number, fetch: () => Promise<T>): Promise<T>;
  /** Drops expired entries and flights, then the entries nearest expiry past the size bound. */
  prune(): Promise<void>;
  /** Waits for the stores in flight (shutdown, tests). */
  settled(): Promise<void>;
  /** Stops: the entries and flights of this process go (a restarted deployment starts cold). */
  close(): Promise<void>;
  /** Whether other processes use the database now (else this one keeps to its own cache). */
  readonly sharing: boolean;
}

export interface SharedCacheOptions {
  maxBytes: number;
  /** Configured secrets: a value whose JSON holds one is never shared. */
  secrets?: readonly string[];
  /** How long a claimed flight holds its key before another process may take over (ms). */
  flightMs?: (provider: ProviderSlug) => number;
  /** How often a waiter looks for the answer of another process's flight (ms). */
  pollMs?: number;
  /** This process is one of several workers of its server: it shares from the start. */
  clustered?: boolean;
  /** How often a process renews its membership and counts the others (ms). */
  heartbeatMs?: number;
  log?: { warn(obj: unknown, msg?: string): void };
}

const MAX_VALUE_BYTES = 1024 * 1024;
/**
 * The shape of the values stored, part of every key: raise it when an adapter's parsed answer
 * changes shape, so that processes of two versions (a rolling upgrade) never read each other's.
 * 2: Nominatim's search answers are PlaceFacts, no longer Place.
 */
const VALUE_FORMAT = '2';
const CLOSE_TIMEOUT_MS = 2000;

type Looked = { state: 'hit'; value: string } | { state: 'claimed' | 'wait' };

interface Store {
  key: Buffer;
  provider: string;
  value: string;
  ttlMs: number;
}

/**
 * Collects what arrives while a statement runs, or in the same turn (a request's engines all ask at
 * once), and sends it together in one statement.
 */
function batcher<In, Out>(run: (items: In[]) => Promise<Out[]>) {
  let queue: { item: In; resolve: (o: Out) => void; reject: (e: unknown) => void }[] = [];
  let running = false;
  let soon = false;
  const next = (): void => {
    soon = false;
    if (running || queue.length === 0) return;
    const batch = queue;
    queue = [];
    running = true;
    run(batch.map((b) => b.item)).then(
      (outs) => {
        running = false;
        for (const [i, b] of batch.entries()) b.resolve(outs[i]!);
        next();
      },
      (err: unknown) => {
        running = false;
        for (const b of batch) b.reject(err);
        next();
      },
    );
  };
  return (item: In): Promise<Out> =>
    new Promise<Out>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!running && !soon) {
        soon = true;
        queueMicrotask(next);
      }
    });
}

export function createSharedCache(pool: pg.Pool, options: SharedCacheOptions): SharedCache {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4);
  const flightMs = options.flightMs ?? (() => 15_000);
  const pollMs = options.pollMs ?? 20;
  const stores = new Set<Promise<void>>();
  const owner = randomUUID();
  /** Whether this process has claimed or stored anything to clean up on close. */
  let used = false;
  /** Other processes use this database: share. */
  let shared = options.clustered === true;
  /** The membership row was written (so close has one to remove). */
  let registered = false;
  const heartbeatMs = options.heartbeatMs ?? 2000;
  const beat = () =>
    pool
      .query<{ members: number }>(
        `WITH me AS (
           INSERT INTO upstream_cache_members (owner, alive_until) VALUES ($1, pacing_now() + $2)
           ON CONFLICT (owner) DO UPDATE SET alive_until = EXCLUDED.alive_until)
         SELECT count(*)::int AS members FROM upstream_cache_members WHERE owner <> $1 AND alive_until > pacing_now()`,
        [owner, heartbeatMs * 3],
      )
      .then(
        ({ rows }) => {
          registered = true;
          shared = options.clustered === true || rows[0]!.members > 0;
        },
        () => {},
      );
  void beat();
  const heartbeat = setInterval(beat, heartbeatMs).unref();

  const lookup = batcher<{ key: Buffer; flightMs: number }, Looked>(async (items) => {
    const { rows } = await pool.query<{ key: Buffer; value: string | null; state: 'hit' | 'claimed' | 'wait' }>(
      'SELECT * FROM upstream_cache_lookup($1, $2::bytea[], $3::float8[])',
      [owner, items.map((i) => i.key), items.map((i) => i.flightMs)],
    );
    const byKey = new Map(rows.map((r) => [r.key.toString('hex'), r]));
    return items.map((i) => {
      const r = byKey.get(i.key.toString('hex'));
      if (r?.state === 'hit' && r.value !== null) return { state: 'hit', value: r.value };
      return { state: r?.state === 'claimed' ? 'claimed' : 'wait' };
    });
  });

  const store = batcher<Store | { release: Buffer }, void>(async (items) => {
    const kept = items.filter((i): i is Store => 'value' in i);
    const released = items.filter((i): i is { release: Buffer } => 'release' in i).map((i) => i.release);
    await pool.query(
      'SELECT upstream_cache_store($1, $2::bytea[], $3::text[], $4::text[], $5::float8[], $6::bytea[])',
      [
        owner,
        kept.map((s) => s.key),
        kept.map((s) => s.provider),
        kept.map((s) => s.value),
        kept.map((s) => s.ttlMs),
        released,
      ],
    );
    return items.map(() => undefined);
  });

  function track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => {
      options.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'shared cache: store failed');
    });
    stores.add(tracked);
    void tracked.finally(() => stores.delete(tracked));
  }

  function shareable(text: string): boolean {
    return Buffer.byteLength(text) <= MAX_VALUE_BYTES && !secrets.some((s) => text.includes(s));
  }

  async function getOrFetch<T>(key: string, provider: ProviderSlug, ttlMs: number, fetch: () => Promise<T>) {
    if (!shared) return fetch();
    const hash = createHash('sha256').update(`${VALUE_FORMAT}\n${key}`, 'utf8').digest();
    const flight = flightMs(provider);
    const giveUpAt = performance.now() + flight;
    for (;;) {
      let looked: Looked;
      try {
        looked = await lookup({ key: hash, flightMs: flight });
        used = true;
      } catch (err) {
        // The database cannot be asked: the call is made (the per-process cache still shares it).
        options.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'shared cache: lookup failed');
        return fetch();
      }
      if (looked.state === 'hit') return JSON.parse(looked.value) as T;
      if (looked.state === 'claimed') {
        let value: T;
        try {
          value = await fetch();
        } catch (err) {
          track(store({ release: hash }));
          throw err;
        }
        const text = JSON.stringify(value);
        if (text !== undefined && shareable(text)) track(store({ key: hash, provider, value: text, ttlMs }));
        else track(store({ release: hash }));
        return value;
      }
      // Another process is fetching it: its answer comes within its flight, else this one takes over.
      if (performance.now() > giveUpAt) return fetch();
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  return {
    getOrFetch,
    async prune() {
      await pool.query('SELECT upstream_cache_prune($1)', [options.maxBytes]);
    },
    async settled() {
      while (stores.size > 0) await Promise.all([...stores]);
    },
    async close() {
      clearInterval(heartbeat);
      while (stores.size > 0) await Promise.all([...stores]);
      // Nothing was ever written (the database never answered): nothing to remove.
      if (!used && !registered) return;
      await pool
        .query(
          withQueryTimeout(
            used
              ? {
                  text: `WITH gone AS (DELETE FROM upstream_flights WHERE owner = $1),
                          gone_member AS (DELETE FROM upstream_cache_members WHERE owner = $1)
                         DELETE FROM upstream_cache WHERE owner = $1`,
                  values: [owner],
                }
              : { text: 'DELETE FROM upstream_cache_members WHERE owner = $1', values: [owner] },
            CLOSE_TIMEOUT_MS,
          ),
        )
        .catch((err: unknown) => {
          options.log?.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'shared cache: entries not removed',
          );
        });
    },
    get sharing() {
      return shared;
    },
  };
}
