import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashSecret, secretMatches } from '../../src/auth/key-format.js';
import { tokenMatches } from '../../src/routes/health.js';

/*
 * Every comparison of a secret an attacker can probe takes the same time
 * whatever the guess: the monitor token and API key secrets through
 * SHA-256 and crypto.timingSafeEqual (so neither content nor length leaks),
 * session cookie signatures, CSRF tokens and password hashes inside the
 * libraries that check them. Timing itself is too noisy to assert in a test;
 * these tests pin the code paths that make it constant, and fail when a
 * plain comparison takes their place.
 */

describe('constant-time comparisons', () => {
  it('matches the monitor token only when equal, for guesses of any length or encoding, without throwing', () => {
    const token = 'monitor-token-0123456789';
    expect(tokenMatches(token, token)).toBe(true);
    for (const guess of [
      '',
      'm',
      token.slice(0, -1),
      `${token}x`,
      token.toUpperCase(),
      `${token.slice(0, -1)}8`,
      'x'.repeat(10_000),
      'ünïcødé-tøkén',
      '\u0000',
    ]) {
      expect(() => tokenMatches(guess, token), JSON.stringify(guess.slice(0, 30))).not.toThrow();
      expect(tokenMatches(guess, token), JSON.stringify(guess.slice(0, 30))).toBe(false);
    }
    expect(tokenMatches('ünïcødé', 'ünïcødé')).toBe(true);
  });

  it('matches an API key secret only against its own hash, and never throws on a stored hash of another length', () => {
    const secret = 'A'.repeat(43);
    const stored = hashSecret(secret);
    expect(secretMatches(secret, stored)).toBe(true);
    for (const guess of ['', 'A', 'A'.repeat(42), 'A'.repeat(44), `${'A'.repeat(42)}B`]) {
      expect(secretMatches(guess, stored)).toBe(false);
    }
    for (const odd of [Buffer.alloc(0), Buffer.alloc(16), Buffer.concat([stored, Buffer.alloc(1)])]) {
      expect(() => secretMatches(secret, odd)).not.toThrow();
      expect(secretMatches(secret, odd)).toBe(false);
    }
    // only the SHA-256 is ever compared: the stored value is a digest, not the secret
    expect(stored.equals(createHash('sha256').update(secret).digest())).toBe(true);
  });

  it('compares through crypto.timingSafeEqual on fixed-length digests in both functions', () => {
    for (const fn of [tokenMatches, secretMatches]) {
      const source = fn.toString();
      // `timingSafeEqual(` as written, `(0, …timingSafeEqual)(` as the test runner compiles it
      expect(source, fn.name).toMatch(/timingSafeEqual\)?\(/);
      expect(source, fn.name).not.toMatch(/\.equals\(|\bsupplied\s*[!=]==?\s*expected\b|\bsecret\s*[!=]==?/);
    }
  });

  it('has no plain ===, == or Buffer.equals comparison of a secret anywhere in the auth, routes and config code', () => {
    const roots = ['src/auth', 'src/routes', 'src/config', 'src/runtime/logging.ts'];
    const files: string[] = [];
    const walk = (p: string) => {
      if (statSync(p).isDirectory()) for (const entry of readdirSync(p)) walk(path.join(p, entry));
      else if (p.endsWith('.ts')) files.push(p);
    };
    for (const root of roots) walk(root);
    expect(files.length).toBeGreaterThan(10);

    const SECRETISH = /(secret|token|password|passwd|hash|digest|signature|apikey|api_key)/i;
    const operand = String.raw`[\w.$\[\]'"()?!]+`;
    const comparison = new RegExp(`(typeof\\s+)?(${operand})\\s*(?:===|!==|==|!=)\\s*(${operand})`, 'g');
    const clean = (side: string) => side.replace(/^[(!]+|[)?]+$/g, '');
    const literal = (side: string) => /^['"`]|^(null|undefined|true|false|\d+)$/.test(side);
    const secretish = (side: string) => SECRETISH.test(side) && !/\.(length|code)$/.test(side) && !literal(side);
    const offending: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/^\s*(\/\/|\*)/.test(line)) return;
          for (const m of line.matchAll(comparison)) {
            if (m[1]) continue; // typeof x === '…'
            const left = clean(m[2]!);
            const right = clean(m[3]!);
            // a secret against anything but a literal
            if ((secretish(left) || secretish(right)) && !literal(left) && !literal(right)) {
              offending.push(`${file}:${i + 1}: ${line.trim()}`);
            }
          }
          if (/\.equals\(/.test(line) && SECRETISH.test(line)) offending.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offending).toEqual([]);
  });

  it('relies on libraries that compare session signatures, CSRF tokens and password hashes with timingSafeEqual', () => {
    const require = createRequire(import.meta.url);
    const sources = {
      'session cookie signature (@fastify/cookie)': path.join(
        path.dirname(require.resolve('@fastify/cookie')),
        'signer.js',
      ),
      'CSRF token (@fastify/csrf)': require.resolve('@fastify/csrf'),
      'password hash (argon2)': require.resolve('argon2'),
    };
    for (const [what, file] of Object.entries(sources)) {
      expect(readFileSync(file, 'utf8'), what).toMatch(/timingSafeEqual\(/);
    }
  });
});
