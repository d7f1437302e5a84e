import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/*
 * `engines` in package.json matches what the dependencies need: every package `npm ci` installs
 * (package-lock.json) allows the oldest release of each Node line that `engines` allows, so an
 * install there prints no EBADENGINE (CI runs the suite on the oldest, Node 20).
 */

const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));

describe('the engines Sift declares', () => {
  it('are allowed by every package in the lockfile, at the oldest release of each Node line', () => {
    const range = new semver.Range((read('package.json') as { engines: { node: string } }).engines.node);
    const oldest = range.set.map(
      (comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!.version,
    );
    expect(oldest[0]).toBe('20.19.0');
    const packages = (read('package-lock.json') as { packages: Record<string, { engines?: { node?: string } }> })
      .packages;
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(packages)) {
      const wanted = entry.engines?.node;
      if (!path || !wanted) continue;
      for (const version of oldest)
        if (!semver.satisfies(version, wanted)) refusing.push(`${path} wants ${wanted} (${version})`);
    }
    expect(refusing).toEqual([]);
  });
});
