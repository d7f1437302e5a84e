import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * The API key format: `svc_sk_<prefix>.<secret>`. The prefix is 8 lowercase
 * hex characters (stored in clear, unique); the secret is 32 random bytes in
 * base64url (43 characters). Only the SHA-256 of the secret is stored.
 */

export const KEY_BRAND = 'svc_sk_';
/** The longest secret accepted (a generated one has 43 characters). */
const MAX_SECRET = 512;

/*
 * A key's parts are checked by loops over their characters, not regular expressions: this runs on
 * every API request, and a regular expression's test cost about 470 instructions whatever the
 * text (callgrind).
 */

/** 8 lowercase hex digits: /^[0-9a-f]{8}$/. */
function isPrefix(text: string): boolean {
  return text.length === 8 && isPrefixAt(text, 0);
}

/** The 8 characters of `text` from `at` are lowercase hex digits. */
function isPrefixAt(text: string, at: number): boolean {
  for (let i = at; i < at + 8; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** `text` from `from` to its end is 1 to 512 base64url characters: /^[A-Za-z0-9_-]{1,512}$/. */
function isSecretFrom(text: string, from: number): boolean {
  const length = text.length - from;
  if (length <= 0 || length > MAX_SECRET) return false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const letter = c | 0x20;
    if (!((letter >= 0x61 && letter <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d)) return false;
  }
  return true;
}

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

/** The presented secret's digest, decoded here on every check instead of into a new Buffer (see secretMatches). */
const presentedDigest = Buffer.alloc(32);

/**
 * Constant-time comparison of a presented secret with a stored hash. The digest is computed as hex
 * and decoded into a reused buffer, because Node builds a hex string faster than a new Buffer (a
 * whole check: 0.53 against 0.83 µs), and this runs on every API request. Synchronous, so the
 * buffer is never shared.
 */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  if (storedHash.length !== presentedDigest.length) return false;
  presentedDigest.write(hash('sha256', secret, 'hex'), 'hex');
  return timingSafeEqual(presentedDigest, storedHash);
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

/**
 * parseKey's checks on the key that `text` holds from `start` to its end (nothing around it), done
 * in place: the secret is not cut out. Why: a secret cut out of a request's header is a slice of it
 * (V8 shares the characters of any cut of 13 or more with the string cut), and each character read
 * of a slice goes through it to its parent. Reading the secret's characters (its check here, its
 * comparison with the secret last verified) took about 2 % of the server's CPU under the instant
 * answers' bench load (`perf`); a loop comparing 43 characters took 180 ns on slices against 86 ns
 * in place (a Node loop of 2 million).
 */
export function findKey(text: string, start: number): KeyInText | null {
  const at = text.startsWith(KEY_BRAND, start) ? start + KEY_BRAND.length : start;
  const dot = text.indexOf('.', at);
  if (dot - at !== 8 || !isPrefixAt(text, at) || !isSecretFrom(text, dot + 1)) return null;
  return { prefix: text.slice(at, dot), secretAt: dot + 1 };
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
  return isPrefix(value) ? value : null;
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
