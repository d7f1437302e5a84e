import type pg from 'pg';
import { NO_PASSWORD, hashPassword, passwordProblem } from './passwords.js';

/** Users of this instance. Usernames are unique regardless of case. */

export interface UserRecord {
  id: number;
  username: string;
  isActive: boolean;
  isStaff: boolean;
  createdAt: Date;
  lastLoginAt: Date | null;
  hasPassword: boolean;
}

/** A rejected account operation (duplicate name, bad username, weak password): its message is for people. */
export class AccountError extends Error {
  override name = 'AccountError';
}

const USERNAME = /^[A-Za-z0-9_.@+-]{1,150}$/;

export function usernameProblem(username: string): string | null {
  if (!USERNAME.test(username)) {
    return 'A username is 1 to 150 characters: letters, digits and . @ + - _ only.';
  }
  return null;
}

interface UserRow {
  id: string;
  username: string;
  is_active: boolean;
  is_staff: boolean;
  created_at: Date;
  last_login_at: Date | null;
  has_password: boolean;
}

const COLUMNS = `id, username, is_active, is_staff, created_at, last_login_at, password_hash <> '' AS has_password`;

function toUser(row: UserRow): UserRecord {
  return {
    id: Number(row.id),
    username: row.username,
    isActive: row.is_active,
    isStaff: row.is_staff,
    createdAt: row.created_at,
    lastLoginAt: row.last_login_at,
    hasPassword: row.has_password,
  };
}

/**
 * Creates a user. `password` null (or omitted) creates an account that cannot sign in
 * until a password is set. Throws AccountError for a taken or invalid username or a weak password.
 */
export async function createUser(
  pool: pg.Pool,
  input: { username: string; password?: string | null; isStaff?: boolean },
): Promise<{ id: number; username: string }> {
  const problem = usernameProblem(input.username);
  if (problem) throw new AccountError(problem);
  if (input.password != null) {
    const weak = passwordProblem(input.password);
    if (weak) throw new AccountError(weak);
  }
  const hash = input.password != null ? await hashPassword(input.password) : NO_PASSWORD;
  try {
    const { rows } = await pool.query<{ id: string; username: string }>(
      'INSERT INTO users (username, password_hash, is_staff) VALUES ($1, $2, $3) RETURNING id, username',
      [input.username, hash, input.isStaff ?? false],
    );
    const row = rows[0]!;
    return { id: Number(row.id), username: row.username };
  } catch (err) {
    if ((err as { code?: string }).code === '23505') {
      throw new AccountError(`A user named '${input.username}' already exists.`);
    }
    throw err;
  }
}

export async function findUserByName(pool: pg.Pool, username: string): Promise<UserRecord | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE lower(username) = lower($1)`, [
    username,
  ]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function findUserById(pool: pg.Pool, id: number): Promise<UserRecord | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0] ? toUser(rows[0]) : null;
}

/** The user and their password hash, for signing in. */
export async function findCredentials(
  pool: pg.Pool,
  username: string,
): Promise<{ user: UserRecord; passwordHash: string } | null> {
  const { rows } = await pool.query<UserRow & { password_hash: string }>(
    `SELECT ${COLUMNS}, password_hash FROM users WHERE lower(username) = lower($1)`,
    [username],
  );
  const row = rows[0];
  return row ? { user: toUser(row), passwordHash: row.password_hash } : null;
}

export async function listUsers(pool: pg.Pool): Promise<UserRecord[]> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users ORDER BY lower(username)`);
  return rows.map(toUser);
}

/** Sets a new password and signs the user out everywhere. */
export async function setPassword(pool: pg.Pool, userId: number, password: string): Promise<void> {
  const weak = passwordProblem(password);
  if (weak) throw new AccountError(weak);
  const hash = await hashPassword(password);
  await pool.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, hash]);
  await endSessionsOf(pool, userId);
}

/** Enables or disables an account; disabling also ends its web sessions. */
export async function setUserActive(pool: pg.Pool, userId: number, active: boolean): Promise<void> {
  await pool.query('UPDATE users SET is_active = $2 WHERE id = $1', [userId, active]);
  if (!active) await endSessionsOf(pool, userId);
}

export async function recordLogin(pool: pg.Pool, userId: number): Promise<void> {
  await pool.query('UPDATE users SET last_login_at = now() WHERE id = $1', [userId]);
}

async function endSessionsOf(pool: pg.Pool, userId: number): Promise<void> {
  await pool.query(`DELETE FROM sessions WHERE data->>'userId' = $1`, [String(userId)]);
}
