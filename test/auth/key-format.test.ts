import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { presentedKey } from '../../src/auth/api-key-auth.js';
import {
  findKey,
  generateKey,
  hashSecret,
  normaliseKeyName,
  parseKey,
  parsePrefixReference,
  secretMatches,
} from '../../src/auth/key-format.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/auth/passwords.js';

describe('API key format', () => {
  it('generates svc_sk_<8 lowercase hex>.<43 base64url characters> with a fresh prefix and secret each time', () => {
    const a = generateKey();
    const b = generateKey();
    expect(a.key).toMatch(/^svc_sk_[0-9a-f]{8}\.[A-Za-z0-9_-]{43}$/);
    expect(a.key.slice(7, 15)).toBe(a.prefix);
    expect(a.key).not.toBe(b.key);
    expect(a.prefix).not.toBe(b.prefix);
  });

  it('stores the SHA-256 of the secret part only, never the secret', () => {
    const { key, secretHash } = generateKey();
    const secret = key.split('.')[1]!;
    expect(secretHash.toString('hex')).toBe(hashSecret(secret).toString('hex'));
    expect(secretHash).toHaveLength(32);
    expect(secretHash.toString('utf8')).not.toContain(secret);
  });

  it('parses a key with or without the svc_sk_ brand, trimming spaces', () => {
    const { key, prefix } = generateKey();
    const secret = key.split('.')[1]!;
    expect(parseKey(key)).toEqual({ prefix, secret });
    expect(parseKey(`  ${key.slice(7)} `)).toEqual({ prefix, secret });
  });

  it('splits on the first dot only', () => {
    expect(parseKey('svc_sk_0123abcd.abc.def')).toBeNull(); // a dot is not a base64url character
    expect(parseKey('svc_sk_0123abcd.abc-def_1')).toEqual({ prefix: '0123abcd', secret: 'abc-def_1' });
  });

  it.each([
    ['no dot', 'svc_sk_0123abcdsecret'],
    ['empty secret', 'svc_sk_0123abcd.'],
    ['empty prefix', 'svc_sk_.secret'],
    ['short prefix', 'svc_sk_0123abc.secret'],
    ['uppercase prefix', 'svc_sk_0123ABCD.secret'],
    ['non-hex prefix', 'svc_sk_0123abcz.secret'],
    ['other brand', 'sk_live_0123abcd.secret'],
    ['spaces inside', 'svc_sk_0123abcd.sec ret'],
    ['empty', ''],
    ['oversized secret', `svc_sk_0123abcd.${'a'.repeat(600)}`],
  ])('rejects a malformed key (%s)', (_case, value) => {
    expect(parseKey(value)).toBeNull();
  });

  it('finds a key in place in a longer text as parseKey finds it cut out', () => {
    const { key, prefix } = generateKey();
    const secret = key.split('.')[1]!;
    expect(findKey(`Bearer ${key}`, 7)).toEqual({ prefix, secretAt: 7 + key.indexOf('.') + 1 });
    expect(findKey(`x${key.slice(7)}`, 1)).toEqual({ prefix, secretAt: 10 });
    const chars = [...'svc_k.0123abcdefzA-', '_sk_', 'svc_sk_', '.', ' '];
    fc.assert(
      fc.property(
        fc.string({ maxLength: 6 }),
        fc.array(fc.constantFrom(...chars), { maxLength: 12 }),
        (before, parts) => {
          const tail = parts.join('');
          const found = findKey(before + tail, before.length);
          const parsed = tail.trim() === tail ? parseKey(tail) : null;
          if (tail.trim() === tail) {
            expect(
              found === null ? null : { prefix: found.prefix, secret: (before + tail).slice(found.secretAt) },
            ).toEqual(parsed);
          }
        },
      ),
      { numRuns: 20_000 },
    );
    expect(parseKey(key)).toEqual({ prefix, secret });
  });

  it('compares secrets against the stored hash', () => {
    const { key, secretHash } = generateKey();
    const secret = key.split('.')[1]!;
    expect(secretMatches(secret, secretHash)).toBe(true);
    expect(secretMatches(`${secret.slice(0, -1)}x`, secretHash)).toBe(secret.endsWith('x'));
    expect(secretMatches(secret, Buffer.alloc(5))).toBe(false);
  });

  it('checks one secret after another against their own hashes', () => {
    const keys = [generateKey(), generateKey()];
    const secrets = keys.map((k) => k.key.split('.')[1]!);
    expect(secretMatches(secrets[0]!, keys[0]!.secretHash)).toBe(true);
    expect(secretMatches(secrets[1]!, keys[0]!.secretHash)).toBe(false);
    expect(secretMatches(secrets[1]!, keys[1]!.secretHash)).toBe(true);
    expect(secretMatches(secrets[0]!, keys[1]!.secretHash)).toBe(false);
    expect(secretMatches(secrets[0]!, keys[0]!.secretHash)).toBe(true);
  });

  it('reads an operator reference to a key: branded prefix, bare prefix, or full key', () => {
    const { key, prefix } = generateKey();
    expect(parsePrefixReference(`svc_sk_${prefix}`)).toBe(prefix);
    expect(parsePrefixReference(prefix)).toBe(prefix);
    expect(parsePrefixReference(key)).toBe(prefix);
    expect(parsePrefixReference(prefix.toUpperCase())).toBe(prefix);
    expect(parsePrefixReference('nothex!!')).toBeNull();
    expect(parsePrefixReference('svc_sk_123')).toBeNull();
  });

  it('names a key "API key" when the name is blank', () => {
    expect(normaliseKeyName('')).toBe('API key');
    expect(normaliseKeyName('   ')).toBe('API key');
    expect(normaliseKeyName(undefined)).toBe('API key');
    expect(normaliseKeyName('  laptop ')).toBe('laptop');
  });
});

describe('presented key headers', () => {
  it('takes the key from Authorization: Api-Key or Bearer, in any case', () => {
    expect(presentedKey({ authorization: 'Api-Key abc' })).toBe('abc');
    expect(presentedKey({ authorization: 'api-key abc' })).toBe('abc');
    expect(presentedKey({ authorization: 'Bearer abc' })).toBe('abc');
    expect(presentedKey({ authorization: 'BEARER   abc ' })).toBe('abc');
  });

  it('falls back to X-Api-Key when Authorization has another scheme or shape', () => {
    expect(presentedKey({ 'x-api-key': ' abc ' })).toBe('abc');
    expect(presentedKey({ authorization: 'Basic Zm9vOmJhcg==', 'x-api-key': 'abc' })).toBe('abc');
    expect(presentedKey({ authorization: 'Api-Key a b', 'x-api-key': 'abc' })).toBe('abc');
    expect(presentedKey({ authorization: 'Api-Key' })).toBeNull();
  });

  it('uses a recognised Authorization header even when X-Api-Key is also sent', () => {
    expect(presentedKey({ authorization: 'Api-Key first', 'x-api-key': 'second' })).toBe('first');
  });

  it('finds no key in an empty X-Api-Key or without headers', () => {
    expect(presentedKey({})).toBeNull();
    expect(presentedKey({ 'x-api-key': '   ' })).toBeNull();
  });
});

describe('passwords', () => {
  it('hashes with argon2id at 19 MiB, 2 iterations, parallelism 1 or more', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash.startsWith('$argon2id$v=19$')).toBe(true);
    const params = Object.fromEntries(
      hash
        .split('$')[3]!
        .split(',')
        .map((kv) => kv.split('=') as [string, string]),
    );
    expect(Number(params.m)).toBeGreaterThanOrEqual(19 * 1024);
    expect(Number(params.t)).toBeGreaterThanOrEqual(2);
    expect(Number(params.p)).toBeGreaterThanOrEqual(1);
    expect(hash).not.toContain('correct horse');
  });

  it('verifies the right password and rejects a wrong one or an account without a password', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(await verifyPassword(hash, 'correct horse battery staple')).toBe(true);
    expect(await verifyPassword(hash, 'Correct horse battery staple')).toBe(false);
    expect(await verifyPassword('', 'anything at all')).toBe(false);
    expect(await verifyPassword('garbage', 'anything at all')).toBe(false);
  });

  it('refuses passwords shorter than 8 characters', () => {
    expect(passwordProblem('short')).toMatch(/at least 8/);
    expect(passwordProblem('long enough')).toBeNull();
  });
});

describe('parseKey against a reference that cuts the key into its parts first', () => {
  it('accepts and splits exactly the keys /^[0-9a-f]{8}$/ and /^[A-Za-z0-9_-]{1,512}$/ accept', () => {
    const reference = (presented: string) => {
      let value = presented.trim();
      if (value.startsWith('svc_sk_')) value = value.slice(7);
      const dot = value.indexOf('.');
      if (dot < 0) return null;
      const prefix = value.slice(0, dot);
      const secret = value.slice(dot + 1);
      return /^[0-9a-f]{8}$/.test(prefix) && /^[A-Za-z0-9_-]{1,512}$/.test(secret) ? { prefix, secret } : null;
    };
    // Characters at and around the edges of each range, and beyond ASCII.
    const char = fc.constantFrom(...'0189afgAFGZz`{@[/:-_.~ \u00e9\u0130\u212a', ...'abcdef0123456789'.split(''));
    const part = (max: number) => fc.array(char, { maxLength: max }).map((c) => c.join(''));
    const key = fc.oneof(
      fc.tuple(part(10), part(20)).map(([p, s]) => `svc_sk_${p}.${s}`),
      fc.tuple(part(10), part(20)).map(([p, s]) => `${p}.${s}`),
      fc
        .tuple(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 8, maxLength: 8 }), fc.nat(600))
        .map(([p, n]) => `${p}.${'a'.repeat(n)}`),
      // Eight characters, most of them hex digits and the rest just outside the range.
      fc
        .tuple(
          fc.string({ unit: fc.constantFrom(...'0123456789abcdef0123456789abcdefgAF`/:'), minLength: 8, maxLength: 8 }),
          part(6),
        )
        .map(([p, s]) => `svc_sk_${p}.${s}`),
      fc.string(),
    );
    fc.assert(
      fc.property(key, (presented) => {
        expect(parseKey(presented)).toEqual(reference(presented));
      }),
      { numRuns: 5000 },
    );
  });
});
