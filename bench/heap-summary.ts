/*
 * Summarises V8 sampling heap profiles (`HEAP=1 npx tsx bench/profile-web.ts`, bench/heap-sampler.mjs):
 * the bytes allocated by each allocation site's own code, grouped by module as the CPU summary groups
 * them (bench/profile-summary.ts: the package, or Sift's source file through the bundle's source
 * maps), and by function, per request of the measured window. Several profiles (one per worker) are
 * added together.
 *
 *   npx tsx bench/heap-summary.ts <requests> <file.heapprofile>… [TOP=<rows, default 25>]
 *
 * A sampling profile draws about one allocation in every 4 KB, so a site's figure is an estimate
 * (good to a few per cent for the large ones). V8's builtins (JSON.parse, string concatenation)
 * allocate on behalf of the JavaScript frame that called them, which is where they are counted.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CallFrame, moduleOf, rankedTables, sourceMapsOf } from './profile-summary.js';

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

export interface HeapProfile {
  head: HeapNode;
}

export interface HeapRow {
  name: string;
  kbPerRequest: number;
  share: number;
}

export interface HeapSummary {
  kbPerRequest: number;
  modules: HeapRow[];
  functions: HeapRow[];
}

export function summarizeHeap(profiles: HeapProfile[], root: string, requests: number): HeapSummary {
  const mapOf = sourceMapsOf();
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const add = (m: Map<string, number>, key: string, bytes: number) => m.set(key, (m.get(key) ?? 0) + bytes);
  for (const profile of profiles) {
    const stack = [profile.head];
    for (let node = stack.pop(); node; node = stack.pop()) {
      stack.push(...node.children);
      if (node.selfSize === 0) continue;
      const module = moduleOf(node.callFrame, root, mapOf);
      total += node.selfSize;
      add(byModule, module, node.selfSize);
      add(byFunction, `${node.callFrame.functionName || '(anonymous)'} (${module})`, node.selfSize);
    }
  }
  const per = Math.max(1, requests) * 1024;
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .map(([name, bytes]) => ({ name, kbPerRequest: bytes / per, share: total > 0 ? bytes / total : 0 }))
      .sort((a, b) => b.kbPerRequest - a.kbPerRequest);
  return { kbPerRequest: total / per, modules: rows(byModule), functions: rows(byFunction) };
}

export function heapSummaryMarkdown(s: HeapSummary, top: number): string {
  return [
    `Sampled: ${s.kbPerRequest.toFixed(1)} KB a request.`,
    '',
    ...rankedTables(s, top, 'KB a request | %', (r: HeapRow) => [r.name, r.kbPerRequest.toFixed(1), r.share]),
  ].join('\n');
}

export function readHeapProfiles(files: readonly string[]): HeapProfile[] {
  return files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as HeapProfile);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [requests, ...files] = process.argv.slice(2);
  if (!requests || !(Number(requests) > 0) || files.length === 0) {
    process.stderr.write('usage: npx tsx bench/heap-summary.ts <requests> <file.heapprofile>…\n');
    process.exit(2);
  }
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const summary = summarizeHeap(readHeapProfiles(files), root, Number(requests));
  process.stdout.write(`${heapSummaryMarkdown(summary, Number(process.env.TOP ?? 25))}\n`);
}
