import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { datedName, writeRunFigures } from '../../bench/results-file.js';

/*
 * bench/results-file.ts: what `npm run bench` leaves in bench/results/. Run on a tiny fake result
 * in a temporary directory; the bench itself is never run here.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sift-bench-results-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = new Date('2026-12-04T07:05:59.900Z');
const figures = (full: boolean) => ({
  at,
  full,
  markdown: '# Sift benchmark\n\n| target | measured |\n|---|---|\n| hung engine | 3012 ms |',
  json: { at: at.toISOString(), targets: [{ name: 'hung engine', met: true }] },
});

describe('the bench results file', () => {
  it('is named by the run start in UTC, to the minute, with zero-padded fields', () => {
    expect(datedName(at)).toBe('2026-12-04-0705');
    // 23:30 in UTC-5 is the next day in UTC: the name does not depend on the machine's time zone.
    expect(datedName(new Date('2026-12-31T23:30:00-05:00'))).toBe('2027-01-01-0430');
  });

  it('keeps a full run as a dated Markdown and JSON pair beside latest', () => {
    const written = writeRunFigures(dir, figures(true));
    expect(readdirSync(dir).sort()).toEqual(['2026-12-04-0705.json', '2026-12-04-0705.md', 'latest.json', 'latest.md']);
    expect(written.map((f) => path.basename(f)).sort()).toEqual(readdirSync(dir).sort());
    const markdown = readFileSync(path.join(dir, '2026-12-04-0705.md'), 'utf8');
    expect(markdown).toBe(`${figures(true).markdown}\n`);
    expect(JSON.parse(readFileSync(path.join(dir, '2026-12-04-0705.json'), 'utf8'))).toEqual(figures(true).json);
  });

  it('writes a section run (BENCH_ONLY) to latest only', () => {
    writeRunFigures(dir, figures(false));
    expect(readdirSync(dir).sort()).toEqual(['latest.json', 'latest.md']);
  });

  it('never overwrites an earlier full run of the same minute', () => {
    writeRunFigures(dir, figures(true));
    writeRunFigures(dir, { ...figures(true), markdown: '# second run' });
    writeRunFigures(dir, { ...figures(true), markdown: '# third run' });
    expect(readFileSync(path.join(dir, '2026-12-04-0705.md'), 'utf8')).toContain('| hung engine |');
    expect(readFileSync(path.join(dir, '2026-12-04-0705-2.md'), 'utf8')).toBe('# second run\n');
    expect(readFileSync(path.join(dir, '2026-12-04-0705-3.md'), 'utf8')).toBe('# third run\n');
    expect(readFileSync(path.join(dir, 'latest.md'), 'utf8')).toBe('# third run\n');
  });

  it('creates the results folder when it is missing', () => {
    const nested = path.join(dir, 'bench', 'results');
    writeRunFigures(nested, figures(true));
    expect(readdirSync(nested)).toContain('2026-12-04-0705.md');
  });
});
