import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's folder (the one holding package.json, migrations/, views/
 * and vocabulary/), found from wherever this code runs: src/runtime/ under
 * tsx and vitest, dist/runtime/ as tsc's modules, or dist/chunks/ inside the
 * server bundle (scripts/build.mjs), so it is looked for rather than counted
 * from the module's own folder.
 */
export const PROJECT_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..', '..');
  }
}
