import { timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { hashSecret, parseKey } from './key-format.js';
import type { ApiPrincipal } from './types.js';

/*
 * Who a presented API key is, as far as this process knows without asking the database.
 *
 * Key rows are cached for at most CACHE_TTL_MS (a revoked key, or an unknown prefix, for at most
 * NEGATIVE_TTL_MS). A key revoked or an owner disabled, on this instance or any other (or by the
 * CLI), is dropped from the cache at once: the database announces the change (key-changes.ts).
 * Every request's secret is hashed and compared with the cached hash in constant time; no secret
 * is kept beyond the request. A key not cached is looked up by the admission statement itself
 * (limits/admission.ts), so that a miss costs no round trip of its own; `remember` caches what it
 * found.
 */

/** Key lookups are cached this long at most (revocations are also announced at once). */
export const CACHE_TTL_MS = 30_000;
/** A prefix with no usable key (unknown or revoked) is remembered this long. */
export const NEGATIVE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 10_000;

export const NOT_PROVIDED = 'Authentication credentials were not provided.';
export const INVALID_KEY = 'Invalid or revoked API key.';
export const USER_DISABLED = 'User account is disabled.';
export const UNAVAILABLE = 'Service temporarily unavailable.';

/** A usable (not revoked) key as the database has it. */
export interface KeyRow {
  keyId: number;
  prefix: string;
  userId: number;
  username: string;
  secretHash: Buffer;
  userActive: boolean;
}

/** What a presented key is. `unknown`: not cached, to be looked up with its secret's hash. */
export type Identity =
  | { kind: 'not-provided' }
  | { kind: 'invalid' }
  | { kind: 'disabled' }
  | { kind: 'ok'; principal: ApiPrincipal }
  | { kind: 'unknown'; prefix: string; secretHash: Buffer; generation: number };

export interface ApiKeyAuthenticator {
  /** The identity of a presented key (see presentedKey), from the cache only. */
  identify(presented: string | null): Identity;
  /** What the database said of a prefix asked about as `unknown`: its row, or null (no usable key). */
  remember(asked: Extract<Identity, { kind: 'unknown' }>, row: KeyRow | null): void;
  /** Drops a cached key (after a revocation). */
  forget(prefix: string): void;
  /** Drops every cached key (after a user is disabled, renamed or deleted). */
  forgetAll(): void;
}

/** The identity a key row gives a secret whose hash is `secretHash`. */
export function identityOf(row: KeyRow | null, secretHash: Buffer): Identity {
  if (!row || !timingSafeEqual(row.secretHash, secretHash)) return { kind: 'invalid' };
  if (!row.userActive) return { kind: 'disabled' };
  return {
    kind: 'ok',
    principal: { keyId: row.keyId, prefix: row.prefix, userId: row.userId, username: row.username },
  };
}

export function createApiKeyAuthenticator(ttlMs = CACHE_TTL_MS): ApiKeyAuthenticator {
  const cache = new LRUCache<string, { row: KeyRow | null }>({ max: CACHE_MAX_ENTRIES, ttl: ttlMs });
  /** Bumped by forget(): a lookup asked before it must not bring an old row back into the cache. */
  let generation = 0;
  return {
    identify(presented) {
      if (presented === null) return { kind: 'not-provided' };
      const key = parseKey(presented);
      if (!key) return { kind: 'invalid' };
      const secretHash = hashSecret(key.secret);
      const cached = cache.get(key.prefix);
      if (!cached) return { kind: 'unknown', prefix: key.prefix, secretHash, generation };
      return identityOf(cached.row, secretHash);
    },
    remember(asked, row) {
      if (asked.generation !== generation) return;
      cache.set(asked.prefix, { row }, row ? {} : { ttl: Math.min(ttlMs, NEGATIVE_TTL_MS) });
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

/**
 * The key a request presents, or null when it presents none: `Authorization: Api-Key <key>` or
 * `Authorization: Bearer <key>` (scheme case-insensitive, exactly two parts), otherwise
 * `X-Api-Key: <key>`. Any other Authorization value is ignored.
 */
export function presentedKey(headers: Readonly<Record<string, string | string[] | undefined>>): string | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const parts = authorization.trim().split(/\s+/);
    if (parts.length === 2 && /^(?:api-key|bearer)$/i.test(parts[0]!)) return parts[1]!;
  }
  const header = headers['x-api-key'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value ? value : null;
}
