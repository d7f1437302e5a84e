import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { HOT_QUERY_TIMEOUT_MS, withQueryTimeout } from '../db/pool.js';
import { listenForKeyChanges } from './key-changes.js';
import { findKey, secretMatches } from './key-format.js';
import type { ApiPrincipal } from './types.js';

/*
 * Authentication of every request under /api/v1/ by API key. Key rows are
 * cached in memory for at most CACHE_TTL_MS, so a hit costs no database round
 * trip and a miss costs one. A key revoked or an owner disabled, on this
 * instance or any other (or by the CLI), is dropped from the cache at once:
 * the database announces the change (key-changes.ts). Should that channel be
 * down, a cached row still lives no longer than CACHE_TTL_MS.
 *
 * A key used again after half its entry's life is read afresh in the
 * background while the cached row answers (refresh ahead): a key in steady
 * use, even once every few seconds among thousands, never waits for a lookup
 * on its requests' path, and no row is ever older than CACHE_TTL_MS. The
 * keys due for such a read within REFRESH_BATCH_MS share one statement: with
 * a thousand keys in steady use that is a few statements a second instead of
 * one per key every 15 s (about 67 a second, per worker).
 */

/** DESIGN.md section 7: key lookups cached 30 s at most. */
export const CACHE_TTL_MS = 30_000;
const CACHE_MAX_ENTRIES = 10_000;
/** How long a key due for a background read waits for others to share its statement (at most a twentieth of the TTL). */
const REFRESH_BATCH_MS = 250;
/** The most keys one background read asks for. */
const MAX_REFRESH_BATCH = 500;
const LAST_USED_INTERVAL_MS = 60_000;
/** After a last-used write, how long the keys used next wait to share one statement. */
const LAST_USED_BATCH_MS = 1000;

export const NOT_PROVIDED = 'Authentication credentials were not provided.';
export const INVALID_KEY = 'Invalid or revoked API key.';
export const USER_DISABLED = 'User account is disabled.';
export const UNAVAILABLE = 'Service temporarily unavailable.';

interface KeyRow {
  keyId: number;
  prefix: string;
  secretHash: Buffer;
  revoked: boolean;
  userId: number;
  username: string;
  userActive: boolean;
}

/**
 * What the cache holds for a prefix: its row, or that there is none; `cachedAt` (performance.now())
 * when it went into the cache, absent for a row read but not cached (see lookup).
 */
interface CachedKey {
  row: KeyRow | null;
  cachedAt?: number;
  /**
   * The secret this row was last seen to match, and the outcome it gave: the key's next requests
   * compare their secret with it (in constant time) instead of hashing it again. A SHA-256 of the
   * secret, decoded and compared, was about 2 µs of every API request in a CPU profile of the
   * server, more than the rest of authentication. Kept only with the cached row, so a row read
   * afresh (a revocation, a refresh) is checked against its hash again. The secret is a copy of
   * its own (flatCopy): a slice of the request's header would keep the header, and be slower to read.
   */
  verified?: { secret: string; outcome: AuthOutcome };
}

export type AuthOutcome =
  | { kind: 'ok'; principal: ApiPrincipal }
  | { kind: 'not-provided' }
  | { kind: 'invalid' }
  | { kind: 'disabled' };

/**
 * The key a request presents, or null when it presents none:
 * `Authorization: Api-Key <key>` or `Bearer <key>` (scheme case-insensitive, exactly two parts),
 * otherwise `X-Api-Key: <key>`. Any other Authorization value is ignored.
 */
export function presentedKey(headers: FastifyRequest['headers']): string | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const parts = schemeAndToken(authorization) ?? authorization.trim().split(/\s+/);
    if (parts.length === 2 && isKeyScheme(parts[0]!)) return parts[1]!;
  }
  const header = headers['x-api-key'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value ? value : null;
}

function isKeyScheme(scheme: string): boolean {
  const lower = scheme.toLowerCase();
  return lower === 'api-key' || lower === 'bearer';
}

/**
 * Where the key starts in the usual Authorization header, "Api-Key <key>" or "Bearer <key>" (see
 * schemeAndToken), so that the key can be read in place (key-format.ts, findKey); -1 for any other
 * header, whose key presentedKey finds.
 */
export function keyStartIn(authorization: string): number {
  const space = usualSpace(authorization);
  return space > 0 && isKeyScheme(authorization.slice(0, space)) ? space + 1 : -1;
}

/** The index of the space in "<scheme> <token>" (printable ASCII with one inner space), or -1. */
function usualSpace(header: string): number {
  let space = -1;
  for (let i = 0; i < header.length; i++) {
    const c = header.charCodeAt(i);
    if (c === 32 && space < 0 && i > 0 && i < header.length - 1) space = i;
    else if (c < 33 || c > 126) return -1;
  }
  return space;
}

/**
 * The usual header, "<scheme> <token>" in printable ASCII with one space, as its two parts (what
 * trim and split on whitespace give it), without the expression; null for any other header. On
 * every API request: the split cost about 0.2 µs and 300 bytes.
 */
export function schemeAndToken(header: string): [string, string] | null {
  const space = usualSpace(header);
  return space < 0 ? null : [header.slice(0, space), header.slice(space + 1)];
}

/**
 * Is `text` from `at` to its end equal to `other`, in a time that depends on their length only (not on where they first
 * differ)? For a presented secret against one that matched its key's hash: an API secret's length
 * is public (every key has the same), its characters are not.
 */
export function sameTextAt(text: string, at: number, other: string): boolean {
  if (text.length - at !== other.length) return false;
  let differ = 0;
  for (let i = 0; i < other.length; i++) differ |= text.charCodeAt(at + i) ^ other.charCodeAt(i);
  return differ === 0;
}

/** A string of its own with the characters of `text` (which may be a slice of a longer one). */
function flatCopy(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}

export interface ApiKeyAuthenticator {
  /**
   * The outcome for the key `presented` holds from `start` to its end (a whole key, trimmed, when
   * `start` is 0; else the key in place in a header, see keyStartIn). Throws when the database
   * cannot be reached.
   */
  authenticate(presented: string | null, start?: number): Promise<AuthOutcome>;
  /** The outcome without a lookup, or undefined when the key's row is not cached (then `authenticate`). */
  authenticateCached(presented: string | null, start?: number): AuthOutcome | undefined;
  /** Drops a cached key (after a revocation on this instance). */
  forget(prefix: string): void;
  /** Drops every cached key (after a user is disabled on this instance). */
  forgetAll(): void;
}

export function createApiKeyAuthenticator(pool: pg.Pool, ttlMs = CACHE_TTL_MS): ApiKeyAuthenticator {
  // ttlResolution 0: staleness read from performance.now() on each get, not from a time cached by a
  // new timer every millisecond (which cost more than the reads on a busy instance).
  const cache = new LRUCache<string, CachedKey>({ max: CACHE_MAX_ENTRIES, ttl: ttlMs, ttlResolution: 0 });
  /** Lookups in flight, by prefix: concurrent misses for one prefix share one query. */
  const reading = new Map<string, { generation: number; answer: Promise<CachedKey> }>();
  /** Prefixes being read afresh in the background (waiting for their statement, or in it). */
  const refreshing = new Set<string>();
  /** Prefixes waiting for the next background read, sent when the timer fires or the batch is full. */
  const dueForRefresh = new Set<string>();
  let refreshTimer: NodeJS.Timeout | null = null;
  const refreshDelayMs = Math.min(REFRESH_BATCH_MS, ttlMs / 20);
  /** Bumped by forget(): a read started before it must not bring an old row back into the cache. */
  let generation = 0;

  /**
   * The cached row, or one read now. A read started before a forget() still
   * answers the requests that joined it (they came before the change was
   * heard) but is not cached, and later requests start a read of their own.
   */
  function lookup(prefix: string): Promise<CachedKey> {
    const shared = reading.get(prefix);
    if (shared && shared.generation === generation) return shared.answer;
    const started = generation;
    const answer = loadKey(pool, prefix)
      .then((row) => {
        const entry: CachedKey = { row };
        if (generation === started) {
          entry.cachedAt = performance.now();
          cache.set(prefix, entry);
        }
        return entry;
      })
      .finally(() => {
        if (reading.get(prefix)?.answer === answer) reading.delete(prefix);
      });
    reading.set(prefix, { generation: started, answer });
    return answer;
  }

  function refreshAhead(prefix: string, entry: CachedKey): void {
    // Only a cached row past half its life: a row just read uncached (see lookup) must not come in this way.
    if (entry.cachedAt === undefined) return;
    const remaining = ttlMs - (performance.now() - entry.cachedAt);
    if (refreshing.has(prefix) || remaining <= 0 || remaining > ttlMs / 2) return;
    refreshing.add(prefix);
    dueForRefresh.add(prefix);
    if (dueForRefresh.size >= MAX_REFRESH_BATCH) sendRefreshes();
    else if (!refreshTimer) {
      refreshTimer = setTimeout(sendRefreshes, refreshDelayMs);
      refreshTimer.unref();
    }
  }

  /** One statement reads every key due for a background read. */
  function sendRefreshes(): void {
    if (refreshTimer) clearTimeout(refreshTimer);
    refreshTimer = null;
    const prefixes = [...dueForRefresh];
    dueForRefresh.clear();
    const started = generation;
    loadKeys(pool, prefixes)
      .then(
        (rows) => {
          if (generation !== started) return;
          const cachedAt = performance.now();
          for (const prefix of prefixes) cache.set(prefix, { row: rows.get(prefix) ?? null, cachedAt });
        },
        // The cached rows serve until they expire; the next miss asks again (and answers 503 if it fails).
        () => undefined,
      )
      .finally(() => {
        for (const prefix of prefixes) refreshing.delete(prefix);
      });
  }

  /** The text that holds the key (see authenticate): a whole key is trimmed. */
  const keyText = (presented: string, start: number): string => (start === 0 ? presented.trim() : presented);

  /** What a key row says of the secret `text` holds from `secretAt` to its end. */
  function outcomeOf(cached: CachedKey, prefix: string, text: string, secretAt: number): AuthOutcome {
    refreshAhead(prefix, cached);
    const verified = cached.verified;
    if (verified && sameTextAt(text, secretAt, verified.secret)) return verified.outcome;
    const row = cached.row;
    const secret = text.slice(secretAt);
    if (!row || row.revoked || !secretMatches(secret, row.secretHash)) return { kind: 'invalid' };
    const outcome: AuthOutcome = row.userActive
      ? {
          kind: 'ok',
          principal: { keyId: row.keyId, prefix: row.prefix, userId: row.userId, username: row.username },
        }
      : { kind: 'disabled' };
    cached.verified = { secret: flatCopy(secret), outcome };
    return outcome;
  }

  return {
    authenticateCached(presented, start = 0) {
      if (presented === null) return { kind: 'not-provided' };
      const text = keyText(presented, start);
      const key = findKey(text, start);
      if (!key) return { kind: 'invalid' };
      const cached = cache.get(key.prefix);
      return cached ? outcomeOf(cached, key.prefix, text, key.secretAt) : undefined;
    },
    async authenticate(presented, start = 0) {
      if (presented === null) return { kind: 'not-provided' };
      const text = keyText(presented, start);
      const key = findKey(text, start);
      if (!key) return { kind: 'invalid' };
      // A miss (or a lookup in flight) waits for the one query.
      const cached = cache.get(key.prefix) ?? (await lookup(key.prefix));
      return outcomeOf(cached, key.prefix, text, key.secretAt);
    },
    forget(prefix) {
      generation++;
      cache.delete(prefix);
    },
    forgetAll() {
      generation++;
      cache.clear();
    },
  };
}

interface KeyRecord {
  id: string;
  prefix: string;
  secret_hash: Buffer;
  revoked: boolean;
  user_id: string;
  username: string;
  is_active: boolean;
}

/** A key row's columns and the join they come from (each caller adds its WHERE). */
const KEY_ROWS = `k.id, k.prefix, k.secret_hash, k.revoked_at IS NOT NULL AS revoked, k.user_id, u.username, u.is_active
       FROM api_keys k JOIN users u ON u.id = k.user_id`;

function keyRow(r: KeyRecord): KeyRow {
  return {
    keyId: Number(r.id),
    prefix: r.prefix,
    secretHash: r.secret_hash,
    revoked: r.revoked,
    userId: Number(r.user_id),
    username: r.username,
    userActive: r.is_active,
  };
}

async function loadKey(pool: pg.Pool, prefix: string): Promise<KeyRow | null> {
  const { rows } = await pool.query<KeyRecord>(
    // On every cache miss's path: a database that does not answer is a 503 within the bound, not a hang.
    withQueryTimeout({ text: `SELECT ${KEY_ROWS} WHERE k.prefix = $1`, values: [prefix] }, HOT_QUERY_TIMEOUT_MS),
  );
  return rows[0] ? keyRow(rows[0]) : null;
}

/** The rows of several keys at once, by prefix (a prefix without a row is absent). */
async function loadKeys(pool: pg.Pool, prefixes: string[]): Promise<Map<string, KeyRow>> {
  const { rows } = await pool.query<KeyRecord>(
    withQueryTimeout({ text: `SELECT ${KEY_ROWS} WHERE k.prefix = ANY($1)`, values: [prefixes] }, HOT_QUERY_TIMEOUT_MS),
  );
  return new Map(rows.map((r) => [r.prefix, keyRow(r)]));
}

const authenticators = new WeakMap<pg.Pool, ApiKeyAuthenticator>();

/** The one authenticator (and cache) of a pool, shared by the API and the pages that revoke keys. */
export function authenticatorFor(pool: pg.Pool): ApiKeyAuthenticator {
  let authenticator = authenticators.get(pool);
  if (!authenticator) {
    authenticator = createApiKeyAuthenticator(pool);
    authenticators.set(pool, authenticator);
  }
  return authenticator;
}

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
      if (written.size >= CACHE_MAX_ENTRIES) written.clear();
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

function unauthorized(reply: FastifyReply, detail: string): FastifyReply {
  return reply.code(401).header('WWW-Authenticate', 'Api-Key').send({ detail });
}

/** Adds the authentication hook to the /api/v1 plugin: every route and the 404 handler. */
export function registerApiKeyAuthentication(app: FastifyInstance): void {
  const authenticator = authenticatorFor(app.pool);
  const lastUsed = createLastUsedRecorder(app.pool, (err) =>
    app.log.warn({ err }, 'could not record when an API key was last used'),
  );
  app.lifecycle.onFlush('api-key-last-used', () => lastUsed.flush());
  const changes = listenForKeyChanges(app.pool, authenticator, { log: app.log });
  app.addHook('onClose', async () => {
    await changes.close();
  });

  /** Sends the answer to a request the outcome refuses: true when one was sent. */
  function refused(request: FastifyRequest, reply: FastifyReply, outcome: AuthOutcome): boolean {
    switch (outcome.kind) {
      case 'not-provided':
        unauthorized(reply, NOT_PROVIDED);
        return true;
      case 'invalid':
        unauthorized(reply, INVALID_KEY);
        return true;
      case 'disabled':
        reply.code(403).send({ detail: USER_DISABLED });
        return true;
      case 'ok':
        request.apiKey = outcome.principal;
        return false;
    }
  }

  // Callback-style: a cached key passes without a promise; a refusal is sent and `done` not called.
  app.addHook('onRequest', (request, reply, done) => {
    // The usual Authorization header's key is read in place (keyStartIn); any other way, cut out.
    const authorization = request.headers.authorization;
    const start = typeof authorization === 'string' ? keyStartIn(authorization) : -1;
    const presented = start > 0 ? (authorization as string) : presentedKey(request.headers);
    const from = start > 0 ? start : 0;
    const cached = authenticator.authenticateCached(presented, from);
    if (cached) {
      if (!refused(request, reply, cached)) done();
      return;
    }
    authenticator.authenticate(presented, from).then(
      (outcome) => {
        if (!refused(request, reply, outcome)) done();
      },
      (err: unknown) => {
        request.log.warn({ err }, 'API key lookup failed');
        reply.code(503).header('Retry-After', '5').send({ detail: UNAVAILABLE });
      },
    );
  });

  app.addHook('onResponse', (request, _reply, done) => {
    if (request.apiKey) lastUsed.touch(request.apiKey.keyId);
    done();
  });
}
