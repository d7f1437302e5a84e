/*
 * Where `npm run bench` keeps its figures. Every run replaces latest.md and latest.json (left out
 * of git); a full run (no BENCH_ONLY) also keeps them as bench/results/YYYY-MM-DD-HHMM.md and
 * .json, named by the run's start in UTC, so that the record of full runs is a folder of files
 * rather than a diary in bench/README.md.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface RunFigures {
  /** When the run started. */
  at: Date;
  /** The report as printed: a Markdown document. */
  markdown: string;
  /** The same figures as data. */
  json: unknown;
  /** Whether every section ran (no BENCH_ONLY). */
  full: boolean;
  /** For a section run alone: added to both names (`latest-contents`, `2026-12-07-0512-contents`). */
  section?: string;
}

/** `2026-12-04-1756` for a run started at 2026-12-04T17:56Z. */
export function datedName(at: Date): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/** A dated name no earlier run in `dir` holds: a second full run in the same minute gets `-2`, and so on. */
function freeDatedName(dir: string, at: Date, suffix: string): string {
  const base = `${datedName(at)}${suffix}`;
  const taken = (name: string) =>
    existsSync(path.join(dir, `${name}.md`)) || existsSync(path.join(dir, `${name}.json`));
  let name = base;
  for (let n = 2; taken(name); n++) name = `${base}-${n}`;
  return name;
}

/** Writes the run's figures into `dir` and answers the paths written. */
export function writeRunFigures(dir: string, figures: RunFigures): string[] {
  mkdirSync(dir, { recursive: true });
  const markdown = figures.markdown.endsWith('\n') ? figures.markdown : `${figures.markdown}\n`;
  const json = `${JSON.stringify(figures.json, null, 2)}\n`;
  const suffix = figures.section ? `-${figures.section}` : '';
  const names = [`latest${suffix}`];
  if (figures.full) names.push(freeDatedName(dir, figures.at, suffix));
  const written: string[] = [];
  for (const name of names) {
    for (const [ext, text] of [
      ['md', markdown],
      ['json', json],
    ] as const) {
      const file = path.join(dir, `${name}.${ext}`);
      writeFileSync(file, text);
      written.push(file);
    }
  }
  return written;
}

/** One side's figures in the side section (the side by side with SearXNG's load): medians of its rounds. */
export interface SideFigures {
  rps: number;
  /** Sift's CPU (primary and workers) per search, ms. */
  siftCpuMsPerSearch: number;
  /** PostgreSQL's CPU (Sift's backends) per search, ms. */
  pgCpuMsPerSearch: number;
  totalCpuMsPerSearch: number;
  /** The range of Sift + PostgreSQL CPU per search over the side's rounds (its A/A), ms. */
  spreadMs: number;
  /** The range of the rounds' throughput, req/s. */
  rpsSpread: number;
}

export interface SideResults {
  workers: number;
  setting: string;
  clustered: SideFigures;
  oneProcess: SideFigures;
  /** The fan-out floor (one process, no gate or database) under the same load: its CPU per search, ms. */
  floorCpuMsPerSearch?: number;
}

/** The machine a results file was measured on (its `machine`), as far as comparing figures goes. */
export interface MachineOf {
  model: string;
  cpus: number;
}

const isFigures = (x: unknown): x is SideFigures =>
  typeof x === 'object' &&
  x !== null &&
  ['rps', 'siftCpuMsPerSearch', 'pgCpuMsPerSearch'].every((k) => typeof (x as Record<string, unknown>)[k] === 'number');

/**
 * The side section's figures of the newest results file in `dir` that has them (newest by the run's
 * start, `at`, which every results file holds: a section run alone writes only latest.json), to
 * print beside a new run's (preferring one measured on this machine's kind); none before the section
 * existed.
 */
export function previousSideFigures(
  dir: string,
  machine: MachineOf,
): { file: string; side: SideResults; otherMachine?: MachineOf } | undefined {
  if (!existsSync(dir)) return undefined;
  // The newest of this machine's kind (CPU model and count), else the newest at all, said to be another's:
  // the same code costs some 60 % more CPU a search on one kind of this workplace than on another.
  type Found = { file: string; side: SideResults; at: string; machine?: MachineOf };
  let same: Found | undefined;
  let any: Found | undefined;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    try {
      const run = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
        at?: string;
        side?: SideResults;
        machine?: Partial<MachineOf>;
      };
      const side = run.side;
      if (!side || !isFigures(side.clustered) || !isFigures(side.oneProcess) || typeof run.at !== 'string') continue;
      const m = run.machine;
      const found: Found = {
        file,
        side,
        at: run.at,
        machine:
          typeof m?.model === 'string' && typeof m.cpus === 'number' ? { model: m.model, cpus: m.cpus } : undefined,
      };
      if (!any || found.at > any.at) any = found;
      const isSame = found.machine?.model === machine.model && found.machine.cpus === machine.cpus;
      if (isSame && (!same || found.at > same.at)) same = found;
    } catch {
      /* not a results file */
    }
  }
  if (same) return { file: same.file, side: same.side };
  return any && { file: any.file, side: any.side, otherMachine: any.machine ?? { model: 'unknown', cpus: 0 } };
}
