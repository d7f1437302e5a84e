import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { datedName, previousSideFigures, writeRunFigures } from '../../bench/results-file.js';

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

describe("the side section's previous figures", () => {
  const side = (ms: number) => {
    const f = {
      rps: 500,
      siftCpuMsPerSearch: ms,
      pgCpuMsPerSearch: 0.2,
      totalCpuMsPerSearch: ms + 0.2,
      spreadMs: 0.1,
      rpsSpread: 9,
    };
    return { workers: 2, setting: 'auto', clustered: f, oneProcess: f };
  };
  const write = (file: string, at: string, model: string, ms: number) =>
    writeFileSync(path.join(dir, file), JSON.stringify({ at, machine: { cpus: 2, model }, side: side(ms) }));

  it("are the newest of this machine's kind, even when another kind ran later", () => {
    write('a.json', '2026-12-01T00:00:00.000Z', 'Intel Xeon', 1.7);
    write('b.json', '2026-12-02T00:00:00.000Z', 'Intel Xeon', 1.6);
    write('c.json', '2026-12-03T00:00:00.000Z', 'AMD EPYC', 1.1);
    const found = previousSideFigures(dir, { model: 'Intel Xeon', cpus: 2 });
    expect(found).toMatchObject({ file: 'b.json' });
    expect(found?.otherMachine).toBeUndefined();
  });

  it("say so when only another machine's figures exist", () => {
    write('c.json', '2026-12-03T00:00:00.000Z', 'AMD EPYC', 1.1);
    expect(previousSideFigures(dir, { model: 'Intel Xeon', cpus: 2 })).toMatchObject({
      file: 'c.json',
      otherMachine: { model: 'AMD EPYC', cpus: 2 },
    });
  });
});
