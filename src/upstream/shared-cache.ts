import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { retryingDeadlocks } from '../db/deadlock.js';
import { withQueryTimeout } from '../db/pool.js';
import { type ProviderSlug, UpstreamError } from '../providers/types.js';
import { type FlightNotices, listenForFlights } from './flight-notices.js';
import { plainJson } from './plain-json.js';
import { type Sampling, sharingPolicy } from './shared-policy.js';
import { PROJECT_ROOT } from '../runtime/project-root.js';

/*
 * The second level of the response cache, shared by every worker and
 * instance on the database (upstream_cache, migrations/0012): an answer one
 * process fetched is served to all for its provider's TTL, and identical
 * calls in flight at the same time on different processes are made once
 * (upstream_flights: the first to claim a key fetches it, the others wait
 * for its answer, and take over if it fails or its holder dies).
 *
 * - A waiter hears the flight end by LISTEN/NOTIFY (flight-notices.ts), and
 *   never waits past the flight's expiry nor its request's deadline.
 * - Every statement locks rows in one order (migrations/0015); one that
 *   still loses a deadlock is run again (db/deadlock.ts).
 * - Used only where it pays (shared-policy.ts): always for providers
 *   something limits (paced, budgeted, or saying so in their answers),
 *   for the others while it saves calls.
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
 * (cache-key.ts: the call's own parameters, no credential); a value whose
 * JSON carries a configured secret, or that is larger than MAX_VALUE_BYTES,
 * is not shared.
 *
 * Values go through JSON: only one that comes back as it was is shared
 * (plain-json.ts: plain data, no Date, Map or class; another is kept in its
 * process and logged once per provider), so what a process reads here is
 * what the adapter returned. Every key starts with the value format, the
 * running version (package.json) by default: processes of two versions (a
 * rolling upgrade) never read each other's values, whose shapes may differ,
 * and no change of a shape has to remember to bump a number.
 */

/** How long a wait for another process's flight may last at most. */
export interface WaitBound {
  /** The request's abort (its deadline passing aborts it too). */
  signal?: AbortSignal;
  /** The request's deadline (performance.now() time). */
  deadlineAt?: number;
}

export interface SharedCache {
  /** The shared value of `key`, or the value `fetch` gives (then shared for `ttlMs`). */
  getOrFetch<T>(
    key: string,
    provider: ProviderSlug,
    ttlMs: number,
    fetch: () => Promise<T>,
    bound?: WaitBound,
  ): Promise<T>;
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
  /** Providers that always share (paced, budgeted); the others while sharing saves calls. */
  always?: (provider: ProviderSlug) => boolean;
  /** The shape of the values stored, part of every key (default: the running version). */
  valueFormat?: string;
  /** This process is one of several workers of its server: it shares from the start. */
  clustered?: boolean;
  /** How often a process renews its membership and counts the others (ms). */
  heartbeatMs?: number;
  log?: { warn(obj: unknown, msg?: string): void };
}

const MAX_VALUE_BYTES = 1024 * 1024;
const CLOSE_TIMEOUT_MS = 2000;

type Looked = { state: 'hit'; value: string } | { state: 'claimed' } | { state: 'wait'; waitMs: number };

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

/**
 * The shared level's sample, where it does not pay: each sampled miss costs a share of a lookup and
 * a store statement. 1 key in 16, over windows of 100 sampled lookups: the measure decides after
 * some 1,600 calls of a provider in each process, seconds under load, so a level wrongly left (a
 * worker that served alone at first) comes back soon; where a window of it saved nothing (distinct
 * queries), 1 in 512, which is what the level costs for as long as they last.
 */
const SHARED_SAMPLING: Sampling = { sampleOf: 16, window: 100, thinBy: 32 };

export function createSharedCache(pool: pg.Pool, options: SharedCacheOptions): SharedCache {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4);
  const flightMs = options.flightMs ?? (() => 15_000);
  const valueFormat = options.valueFormat ?? siftVersion();
  const policy = sharingPolicy(options.always ?? (() => false), SHARED_SAMPLING);
  const unplain = new Set<ProviderSlug>();
  /** Heard when it shares: flights of other processes end (opened once sharing starts). */
  let notices: FlightNotices | undefined;
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
          if (shared && !closing) notices ??= listenForFlights(pool, options.log);
        },
        () => {},
      );
  let closing = false;
  if (shared) notices = listenForFlights(pool, options.log);
  void beat();
  const heartbeat = setInterval(beat, heartbeatMs).unref();

  const lookup = batcher<{ key: Buffer; flightMs: number }, Looked>(async (items) => {
    const { rows } = await retryingDeadlocks(() =>
      pool.query<{ key: Buffer; value: string | null; state: 'hit' | 'claimed' | 'wait'; wait_ms: number | null }>(
        'SELECT * FROM upstream_cache_lookup($1, $2::bytea[], $3::float8[])',
        [owner, items.map((i) => i.key), items.map((i) => i.flightMs)],
      ),
    );
    const byKey = new Map(rows.map((r) => [r.key.toString('hex'), r]));
    return items.map((i): Looked => {
      const r = byKey.get(i.key.toString('hex'));
      if (r?.state === 'hit' && r.value !== null) return { state: 'hit', value: r.value };
      if (r?.state === 'claimed') return { state: 'claimed' };
      return { state: 'wait', waitMs: r?.wait_ms ?? i.flightMs };
    });
  });

  const store = batcher<Store | { release: Buffer }, void>(async (items) => {
    const kept = items.filter((i): i is Store => 'value' in i);
    const released = items.filter((i): i is { release: Buffer } => 'release' in i).map((i) => i.release);
    await retryingDeadlocks(() =>
      pool.query('SELECT upstream_cache_store($1, $2::bytea[], $3::text[], $4::text[], $5::float8[], $6::bytea[])', [
        owner,
        kept.map((s) => s.key),
        kept.map((s) => s.provider),
        kept.map((s) => s.value),
        kept.map((s) => s.ttlMs),
        released,
      ]),
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

  /** An adapter whose value would not survive JSON is a bug to fix: said once per provider. */
  function notPlain(provider: ProviderSlug): void {
    if (unplain.has(provider)) return;
    unplain.add(provider);
    options.log?.warn({ provider }, 'shared cache: a parsed value is not plain data, so it is not shared');
  }

  function shareable(text: string): boolean {
    return Buffer.byteLength(text) <= MAX_VALUE_BYTES && !secrets.some((s) => text.includes(s));
  }

  /** The claimed flight's call: its answer is stored (shared), its failure ends the flight. */
  async function fetchAndStore<T>(hash: Buffer, provider: ProviderSlug, ttlMs: number, fetch: () => Promise<T>) {
    let value: T;
    try {
      value = await fetch();
    } catch (err) {
      track(store({ release: hash }));
      throw err;
    }
    const text = plainJson(value);
    if (text === undefined) notPlain(provider);
    if (text !== undefined && shareable(text)) track(store({ key: hash, provider, value: text, ttlMs }));
    else track(store({ release: hash }));
    return value;
  }

  async function getOrFetch<T>(
    key: string,
    provider: ProviderSlug,
    ttlMs: number,
    fetch: () => Promise<T>,
    bound: WaitBound = {},
  ): Promise<T> {
    if (!shared) return fetch();
    const hash = createHash('sha256').update(`${valueFormat}\n${key}`, 'utf8').digest();
    if (!policy.uses(provider, hash.readUInt16BE(0))) return fetch();
    const flight = flightMs(provider);
    const giveUpAt = performance.now() + flight;
    let waited = false;
    for (;;) {
      // Interest is taken before the question, so the end of a flight cannot pass unheard between.
      const watch = notices?.watch(hash.toString('hex'));
      let looked: Looked;
      try {
        looked = await lookup({ key: hash, flightMs: flight });
        used = true;
      } catch (err) {
        watch?.done();
        // The database cannot be asked: the call is made (the per-process cache still shares it).
        options.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'shared cache: lookup failed');
        return fetch();
      }
      if (looked.state !== 'wait') {
        watch?.done();
        policy.note(provider, looked.state === 'hit' || waited);
        if (looked.state === 'hit') return JSON.parse(looked.value) as T;
        return fetchAndStore(hash, provider, ttlMs, fetch);
      }
      // Another process is fetching it: its answer comes within its flight, else this one takes over.
      waited = true;
      const now = performance.now();
      const deadline = bound.deadlineAt ?? Number.POSITIVE_INFINITY;
      if (now >= giveUpAt) {
        watch?.done();
        policy.note(provider, false);
        return fetch();
      }
      if (now >= deadline || bound.signal?.aborted) {
        watch?.done();
        throw new UpstreamError(provider, 'timeout', 'request deadline passed');
      }
      const ms = Math.min(looked.waitMs + 1, giveUpAt - now, deadline - now);
      if (watch) await watch.wait(ms, bound.signal);
      else await new Promise((resolve) => setTimeout(resolve, ms));
      watch?.done();
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
      closing = true;
      clearInterval(heartbeat);
      await notices?.close();
      while (stores.size > 0) await Promise.all([...stores]);
      // Nothing was ever written (the database never answered): nothing to remove.
      if (!used && !registered) return;
      await pool
        .query(
          withQueryTimeout(
            used
              ? { text: 'SELECT upstream_cache_leave($1)', values: [owner] }
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

let version: string | undefined;
/** The running version (package.json), read once. */
function siftVersion(): string {
  if (version === undefined) {
    try {
      version = String(
        (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version,
      );
    } catch {
      version = 'unknown';
    }
  }
  return version;
}
