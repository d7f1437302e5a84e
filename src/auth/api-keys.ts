import type pg from 'pg';
import { displayPrefix, generateKey, keyNameProblem, normaliseKeyName } from './key-format.js';
import { AccountError } from './users.js';

/** API keys in the database: issue, list, revoke. The secret is never stored. */

export interface ApiKeyRecord {
  id: number;
  prefix: string;
  /** `svc_sk_` + prefix. */
  displayPrefix: string;
  name: string;
  userId: number;
  username: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

interface KeyRow {
  id: string;
  prefix: string;
  name: string;
  user_id: string;
  username: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = `k.id, k.prefix, k.name, k.user_id, u.username, k.created_at, k.last_used_at, k.revoked_at`;

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    prefix: row.prefix,
    displayPrefix: displayPrefix(row.prefix),
    name: row.name,
    userId: Number(row.user_id),
    username: row.username,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/**
 * Creates a key for a user and returns the full key: the only time it exists
 * outside the caller. A blank name means "API key".
 */
export async function issueApiKey(
  pool: pg.Pool,
  userId: number,
  name?: string,
): Promise<{ key: string; prefix: string; id: number }> {
  const storedName = normaliseKeyName(name);
  const problem = keyNameProblem(storedName);
  if (problem) throw new AccountError(problem);
  for (let attempt = 0; ; attempt++) {
    const generated = generateKey();
    try {
      const { rows } = await pool.query<{ id: string }>(
        'INSERT INTO api_keys (user_id, prefix, secret_hash, name) VALUES ($1, $2, $3, $4) RETURNING id',
        [userId, generated.prefix, generated.secretHash, storedName],
      );
      return { key: generated.key, prefix: generated.prefix, id: Number(rows[0]!.id) };
    } catch (err) {
      // A prefix collision (1 in 4 billion per existing key): draw another.
      const e = err as { code?: string; constraint?: string };
      if (e.code === '23505' && attempt < 5) continue;
      throw err;
    }
  }
}

/** Keys, newest first; only one user's when `userId` is given. */
export async function listApiKeys(pool: pg.Pool, filter: { userId?: number } = {}): Promise<ApiKeyRecord[]> {
  const { rows } = await pool.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys k JOIN users u ON u.id = k.user_id
      WHERE ($1::bigint IS NULL OR k.user_id = $1) ORDER BY k.created_at DESC, k.id DESC`,
    [filter.userId ?? null],
  );
  return rows.map(toRecord);
}

export async function findApiKeyByPrefix(pool: pg.Pool, prefix: string): Promise<ApiKeyRecord | null> {
  const { rows } = await pool.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = $1`,
    [prefix],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function findApiKeyById(pool: pg.Pool, id: number): Promise<ApiKeyRecord | null> {
  const { rows } = await pool.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = $1`,
    [id],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function countActiveKeys(pool: pg.Pool, userId: number): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL',
    [userId],
  );
  return rows[0]!.n;
}

/**
 * Revokes a key (optionally only if it belongs to `ownerId`). Returns false
 * when there was no such active key.
 */
export async function revokeApiKey(pool: pg.Pool, keyId: number, ownerId?: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE api_keys SET revoked_at = now()
      WHERE id = $1 AND revoked_at IS NULL AND ($2::bigint IS NULL OR user_id = $2)`,
    [keyId, ownerId ?? null],
  );
  return (rowCount ?? 0) > 0;
}
