import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's folder (the one holding package.json, migrations/ and
 * views/), found from wherever this code runs: src/ under tsx and vitest,
 * dist/ as tsc's modules, or dist/chunks/ inside the server bundle
 * (scripts/build.mjs), where a path counted from the module's own folder
 * would land one level off.
 */
export const PROJECT_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '..');
  }
}
