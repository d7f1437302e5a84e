import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * The API key format: `svc_sk_<prefix>.<secret>`. The prefix is 8 lowercase
 * hex characters (stored in clear, unique); the secret is 32 random bytes in
 * base64url (43 characters). Only the SHA-256 of the secret is stored.
 */

export const KEY_BRAND = 'svc_sk_';
/** The longest secret accepted (a generated one has 43 characters). */
const MAX_SECRET = 512;

/** A presented key: the optional brand, 8 lowercase hex digits of prefix, a dot, then the secret in base64url. */
const KEY = new RegExp(`^(?:${KEY_BRAND})?([0-9a-f]{8})\\.([A-Za-z0-9_-]{1,${MAX_SECRET}})$`);
const PREFIX = /^[0-9a-f]{8}$/;

export interface GeneratedKey {
  key: string;
  prefix: string;
  secretHash: Buffer;
}

export function generateKey(): GeneratedKey {
  const prefix = randomBytes(4).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { key: `${KEY_BRAND}${prefix}.${secret}`, prefix, secretHash: hashSecret(secret) };
}

export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** Constant-time comparison of a presented secret's SHA-256 with a stored hash. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const digest = hashSecret(secret);
  return digest.length === storedHash.length && timingSafeEqual(digest, storedHash);
}

/**
 * Splits a presented key into prefix and secret. Accepts it with or without
 * the `svc_sk_` brand; anything else (no dot, a bad prefix, an empty or
 * oversized secret) is null.
 */
export function parseKey(presented: string): { prefix: string; secret: string } | null {
  const value = presented.trim();
  const found = findKey(value, 0);
  return found ? { prefix: found.prefix, secret: value.slice(found.secretAt) } : null;
}

/** Where a key is in the text that holds it: its prefix, and the index its secret starts at (it runs to the end). */
export interface KeyInText {
  prefix: string;
  secretAt: number;
}

/** parseKey's checks on the key that `text` holds from `start` to its end (nothing around it). */
export function findKey(text: string, start: number): KeyInText | null {
  const found = KEY.exec(start === 0 ? text : text.slice(start));
  return found ? { prefix: found[1]!, secretAt: text.length - found[2]!.length } : null;
}

/**
 * The prefix named by an operator: `svc_sk_xxxxxxxx`, the bare 8 hex
 * characters, or a full key (cut at the first dot). Null when it is not one.
 */
export function parsePrefixReference(reference: string): string | null {
  let value = reference.trim();
  if (value.startsWith(KEY_BRAND)) value = value.slice(KEY_BRAND.length);
  const dot = value.indexOf('.');
  if (dot >= 0) value = value.slice(0, dot);
  value = value.toLowerCase();
  return PREFIX.test(value) ? value : null;
}

export function displayPrefix(prefix: string): string {
  return `${KEY_BRAND}${prefix}`;
}

/** Stored name of a key: blank means "API key"; at most 100 characters. */
export const DEFAULT_KEY_NAME = 'API key';
export const MAX_KEY_NAME_LENGTH = 100;

export function normaliseKeyName(name: string | undefined | null): string {
  const trimmed = (name ?? '').trim();
  return trimmed === '' ? DEFAULT_KEY_NAME : trimmed;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Why a (trimmed) key name cannot be stored, or null: too long, or a control character (Postgres text holds no NUL). */
export function keyNameProblem(name: string): string | null {
  if (name.length > MAX_KEY_NAME_LENGTH) return `A key name is at most ${MAX_KEY_NAME_LENGTH} characters long.`;
  if (CONTROL_CHARACTER.test(name)) return 'A key name cannot contain control characters such as line breaks or tabs.';
  return null;
}
