import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/runtime/project-root.js';

/*
 * `engines` in package.json promises the Node versions Sift runs on: every package installed for
 * production (package-lock.json, dev dependencies left out) must allow the oldest of them, or
 * `npm ci` on that Node prints EBADENGINE and the package may not work there. The one known
 * exception is listed with its reason (docs/operations.md, Requirements).
 */

/** Transitive packages that declare a newer Node but run on the oldest allowed (the suite runs there). */
const KNOWN: Record<string, string> = {
  // Fastify's light-my-request and @fastify/cookie require cookie 2: an ES module that Node 20.19
  // loads through require().
  'node_modules/cookie': '>=22',
};

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
      if (node && !semver.satisfies(oldest, node) && KNOWN[where] !== node) {
        refusing.push(`${where}@${entry.version}: ${node}`);
      }
    }
    expect(refusing).toEqual([]);
  });
});
