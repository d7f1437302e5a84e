import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations
import { ensureBuilt } from '../../scripts/ensure-built.mjs';
import { makePdf } from './pdf-file.js';

describe('the built extraction worker', () => {
  // A stale dist/ is built first: on a busy machine that alone may take over a minute.
  beforeAll(() => ensureBuilt(), 180_000);

  it('is a bundle of its own in dist/, which the built pool finds and runs for HTML and PDF pages', () => {
    // scripts/build.mjs: the worker is an esbuild entry (a thread loads its file by path).
    expect(readFileSync('dist/contents/extract/worker.js', 'utf8')).toMatch(/from "\.\.\/\.\.\/chunks\/[\w-]+\.js"/);
    const pdf = Buffer.from(makePdf(['Built page one.', 'Built page two.'], 'Built PDF')).toString('base64');
    const script = `
      const { createExtractor } = await import('./dist/contents/extract/index.js');
      const extractor = createExtractor({ threads: 1, timeoutMs: 30000, maxQueue: 2 });
      const html = await extractor.extract({ kind: 'html', url: 'https://x.example/a/', format: 'markdown',
        text: '<html><body><article><h2>Built</h2><p>Read by the <a href="b">bundled</a> worker.</p></article></body></html>' });
      const pdf = await extractor.extract({ kind: 'pdf', url: 'https://x.example/a.pdf', format: 'text',
        bytes: Buffer.from(${JSON.stringify(pdf)}, 'base64') });
      await extractor.close();
      console.log(JSON.stringify({ html: html.content, pdf: pdf.content, title: pdf.title }));
    `;
    // A process of its own, without tsx: only what the build wrote.
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual({
      html: '## Built\n\nRead by the [bundled](https://x.example/a/b) worker.',
      pdf: 'Built page one.\n\nBuilt page two.',
      title: 'Built PDF',
    });
  });
});
