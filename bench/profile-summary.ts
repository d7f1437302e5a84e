/*
 * Summarises V8 CPU profiles (`node --cpu-prof`, e.g. `PROF=1 npx tsx bench/profile-web.ts`): self
 * time grouped by module, the package for code under node_modules and the source file for Sift's
 * own (through the bundle's source maps, dist/*.js.map), and V8's own entries as they are named
 * (garbage collector, program, idle). Several profiles (one per worker) are added together.
 *
 *   npx tsx bench/profile-summary.ts <file.cpuprofile>… [TOP=<rows, default 25>]
 *
 * A V8 CPU profile samples the main thread only and puts the time of builtins and runtime calls on
 * the last JavaScript frame it saw (bench/README.md, "How to profile one change"): read the modules
 * as where the time is spent from, not as what it was spent on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  /** 0-based. */
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples?: number[];
  /** Microseconds before each sample. */
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export interface ModuleTime {
  module: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  /** Sampled time, ms, every profile together (within the window, when one was given). */
  totalMs: number;
  /** Whether only the samples within the window were counted (false: none fell in it, or none given). */
  windowed: boolean;
  /** Time outside idle, ms. */
  busyMs: number;
  modules: ModuleTime[];
  functions: ModuleTime[];
}

/** `fastify` for …/node_modules/fastify/lib/x.js, `@fastify/ajv-compiler` for a scoped one. */
function packageOf(file: string): string | undefined {
  const at = file.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const [first, second] = file.slice(at + '/node_modules/'.length).split('/');
  return first?.startsWith('@') ? `${first}/${second}` : first;
}

/** Where frames of one generated file come from: its source map, read once. */
export function sourceMapsOf(): (file: string) => SourceMap | undefined {
  const cache = new Map<string, SourceMap | undefined>();
  return (file) => {
    if (!cache.has(file)) {
      const mapFile = `${file}.map`;
      let map: SourceMap | undefined;
      if (existsSync(mapFile)) {
        try {
          map = new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')));
        } catch {
          map = undefined;
        }
      }
      cache.set(file, map);
    }
    return cache.get(file);
  };
}

/** The module a frame's code belongs to, and the function's name with it. */
export function moduleOf(frame: CallFrame, root: string, mapOf: (file: string) => SourceMap | undefined): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url;
  // A CommonJS module's frames may name its file by path, an ES module's by file: URL.
  if (!url.startsWith('file:') && !path.isAbsolute(url)) return url;
  let file = url.startsWith('file:') ? fileURLToPath(url) : url;
  const map = mapOf(file);
  if (map) {
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
    if (entry.originalSource) {
      const source = entry.originalSource.startsWith('file:')
        ? fileURLToPath(entry.originalSource)
        : path.resolve(path.dirname(file), entry.originalSource);
      file = source;
    }
  }
  return packageOf(file) ?? path.relative(root, file);
}

/**
 * A stretch of time, in microseconds of the system's monotonic clock (`process.hrtime.bigint()` /
 * 1000n): on Linux the clock of a profile's `startTime` and samples, so that a summary can leave
 * out a server's start-up and warm-up.
 */
export interface Window {
  fromUs: number;
  toUs: number;
}

/** The monotonic clock now, in microseconds (for a Window). */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time by module and by function over `profiles`, largest first; with `window`, only the
 * samples taken within it (all of them when none is: a clock that differs).
 */
export function summarize(profiles: CpuProfile[], root: string, window?: Window): ProfileSummary {
  const inWindow = (p: CpuProfile) => {
    if (!window) return () => true;
    let t = p.startTime;
    const deltas = p.timeDeltas ?? [];
    const times = deltas.map((d) => (t += d));
    return (i: number) => times[i]! >= window.fromUs && times[i]! <= window.toUs;
  };
  const windowed = Boolean(window) && profiles.some((p) => (p.samples ?? []).some((_, i) => inWindow(p)(i)));
  if (window && !windowed) return summarize(profiles, root);
  return summarizeSamples(profiles, root, windowed ? inWindow : () => () => true, windowed);
}

function summarizeSamples(
  profiles: CpuProfile[],
  root: string,
  keep: (p: CpuProfile) => (i: number) => boolean,
  windowed: boolean,
): ProfileSummary {
  const mapOf = sourceMapsOf();
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const profile of profiles) {
    const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    const names = new Map<number, { module: string; fn: string }>();
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    const kept = keep(profile);
    for (const [i, id] of samples.entries()) {
      if (!kept(i)) continue;
      const us = Math.max(0, deltas[i] ?? 0);
      let name = names.get(id);
      if (!name) {
        const frame = nodes.get(id);
        const module = frame ? moduleOf(frame, root, mapOf) : '(unknown)';
        name = { module, fn: `${frame?.functionName || '(anonymous)'} (${module})` };
        names.set(id, name);
      }
      totalUs += us;
      if (name.module === '(idle)') idleUs += us;
      byModule.set(name.module, (byModule.get(name.module) ?? 0) + us);
      byFunction.set(name.fn, (byFunction.get(name.fn) ?? 0) + us);
    }
  }
  const busyUs = totalUs - idleUs;
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .filter(([k]) => k !== '(idle)' && !k.startsWith('(idle) '))
      .map(([module, us]) => ({ module, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }))
      .sort((a, b) => b.ms - a.ms);
  return {
    totalMs: totalUs / 1000,
    windowed,
    busyMs: busyUs / 1000,
    modules: rows(byModule),
    functions: rows(byFunction),
  };
}

/**
 * A summary's two tables as Markdown lines, the top `top` rows of each: by module, then by function.
 * `columns` heads the figure and share columns; `cells` gives a row's name, figure and share (0-1).
 */
export function rankedTables<R>(
  tables: { modules: R[]; functions: R[] },
  top: number,
  columns: string,
  cells: (row: R) => [name: string, figure: string, share: number],
): string[] {
  const table = (title: string, rows: R[]) => [
    `| ${title} | ${columns} |`,
    '|---|---|---|',
    ...rows.slice(0, top).map((row) => {
      const [name, figure, share] = cells(row);
      return `| ${name.replaceAll('|', '\\|')} | ${figure} | ${(100 * share).toFixed(1)} |`;
    }),
  ];
  return [
    ...table('module (package, or source file)', tables.modules),
    '',
    ...table('function (module)', tables.functions),
  ];
}

/** The summary as Markdown: the top `top` modules and functions by self time, in % of the time not idle. */
export function summaryMarkdown(s: ProfileSummary, top: number): string {
  return [
    `Sampled ${s.totalMs.toFixed(0)} ms ${s.windowed ? 'within the measured window' : "(the processes' whole lives)"}, of which ${s.busyMs.toFixed(0)} ms not idle (the shares below are of that).`,
    '',
    ...rankedTables(s, top, 'self ms | % of busy', (r: ModuleTime) => [r.module, r.ms.toFixed(0), r.share]),
  ].join('\n');
}

export function readProfiles(files: readonly string[]): CpuProfile[] {
  return files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as CpuProfile);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: npx tsx bench/profile-summary.ts <file.cpuprofile>…\n');
    process.exit(2);
  }
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  process.stdout.write(`${summaryMarkdown(summarize(readProfiles(files), root), Number(process.env.TOP ?? 25))}\n`);
}
