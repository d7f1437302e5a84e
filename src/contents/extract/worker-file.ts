/*
 * Where the worker entry is, from wherever this module runs: as source under tsx or vitest
 * (worker.ts beside it, loaded through tsx, which the worker thread does not otherwise have), as
 * tsc's modules in dist/contents/extract/, or inside the server bundle (dist/server.js or one of
 * dist/chunks/), which scripts/build.mjs builds together with its own bundled worker entry at
 * dist/contents/extract/worker.js.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface WorkerFile {
  filename: string;
  execArgv: string[];
}

export function extractionWorkerFile(): WorkerFile {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const hasTsx = process.execArgv.some((arg) => arg.includes('tsx'));
    return {
      filename: fileURLToPath(new URL('./worker.ts', here)),
      execArgv: hasTsx ? process.execArgv : [...process.execArgv, '--import', 'tsx'],
    };
  }
  const candidates = ['./worker.js', './contents/extract/worker.js', '../contents/extract/worker.js'];
  for (const candidate of candidates) {
    const filename = fileURLToPath(new URL(candidate, here));
    if (existsSync(filename)) return { filename, execArgv: process.execArgv };
  }
  throw new Error(`the extraction worker is missing beside ${fileURLToPath(here)}: run npm run build`);
}
