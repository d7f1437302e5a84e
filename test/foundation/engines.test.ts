import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/runtime/project-root.js';

/*
 * `engines` in package.json promises the Node versions Sift runs on: every package installed for
 * production (package-lock.json, dev dependencies left out) must allow the oldest of them, or
 * `npm ci` on that Node prints EBADENGINE and the package may not work there. Where a package
 * asks for a dependency that excludes it, package.json overrides it with a version that keeps the
 * same API (docs/operations.md, Requirements).
 */

interface Lock {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
}

const read = (file: string) => JSON.parse(readFileSync(path.join(PROJECT_ROOT, file), 'utf8')) as unknown;

describe('engines', () => {
  it("allows no Node version that a production dependency's own engines exclude", () => {
    const range = (read('package.json') as { engines: { node: string } }).engines.node;
    const oldest = semver.minVersion(range)!.version;
    expect(oldest).toBe('20.19.0');
    const lock = read('package-lock.json') as Lock;
    const refusing: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (where === '' || entry.dev) continue;
      const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (node && !semver.satisfies(oldest, node)) {
        refusing.push(`${where}@${entry.version}: ${node}`);
      }
    }
    expect(refusing).toEqual([]);
  });

  it.each([
    ['@fastify/cookie', ['@fastify/cookie']],
    ['light-my-request', ['fastify', 'light-my-request']],
  ])('gives %s a cookie module with the functions it calls', (_name, chain) => {
    // Both declare cookie ^2 (Node 22); the override gives them cookie 1.1, whose API is the same.
    let from = createRequire(path.join(PROJECT_ROOT, 'package.json'));
    for (const hop of chain) from = createRequire(from.resolve(hop));
    const cookie = from('cookie') as {
      stringifySetCookie: (c: { name: string; value: string; httpOnly?: boolean }) => string;
      parseCookie: (header: string) => Record<string, string | undefined>;
    };
    expect(cookie.stringifySetCookie({ name: 'sid', value: 'a b', httpOnly: true })).toBe('sid=a%20b; HttpOnly');
    expect({ ...cookie.parseCookie('sid=a%20b; theme=dark') }).toEqual({ sid: 'a b', theme: 'dark' });
  });
});
