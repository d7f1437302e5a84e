// Builds dist/ (scripts/build.mjs) when it is missing or older than any source file or the build script.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

export function ensureBuilt() {
  // A deployed image ships dist/ without the sources: nothing to build.
  if (!existsSync(path.join(root, 'src'))) return;
  let built = 0;
  try {
    built = statSync(stamp).mtimeMs;
  } catch {}
  const sources = Math.max(
    newestSource(path.join(root, 'src')),
    statSync(path.join(root, 'tsconfig.json')).mtimeMs,
    statSync(path.join(root, 'tsconfig.build.json')).mtimeMs,
    statSync(path.join(root, 'package-lock.json')).mtimeMs,
    statSync(path.join(root, 'scripts', 'build.mjs')).mtimeMs,
  );
  if (built >= sources) return;
  // In a child process: the build loads esbuild, which a deployed image does not have (it never gets here).
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) process.exit(1);
}

// `node scripts/ensure-built.mjs` (npm start) builds when needed.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) ensureBuilt();
