/*
 * Where `npm run bench` keeps its figures. Every run replaces latest.md and latest.json (left out
 * of git); a full run (no BENCH_ONLY) also keeps them as bench/results/YYYY-MM-DD-HHMM.md and
 * .json, named by the run's start in UTC, so that the record of full runs is a folder of files
 * rather than a diary in bench/README.md.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
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
}

/** `2026-12-04-1756` for a run started at 2026-12-04T17:56Z. */
export function datedName(at: Date): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/** A dated name no earlier run in `dir` holds: a second full run in the same minute gets `-2`, and so on. */
function freeDatedName(dir: string, at: Date): string {
  const base = datedName(at);
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
  const names = ['latest'];
  if (figures.full) names.push(freeDatedName(dir, figures.at));
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
