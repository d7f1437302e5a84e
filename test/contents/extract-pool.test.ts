import { afterEach, describe, expect, it } from 'vitest';
import { createExtractor, ExtractionFailure, type Extractor, ExtractorBusy } from '../../src/contents/extract/index.js';

const URL = 'https://x.example/page';
const SMALL = `<html><body><article><p>${'A short and readable paragraph of text. '.repeat(20)}</p></article></body></html>`;

/** A page of some 4 MB: tens of thousands of blocks, which takes tens of seconds to extract, far over the limit below. */
function hugePage(): string {
  const block =
    '<div class="item"><p>Some words in a paragraph, <a href="/l">a link</a> and <em>emphasis</em>.</p></div>';
  return `<html><body><main>${block.repeat(40_000)}</main></body></html>`;
}

/** Counts the main thread's timer ticks until `work` settles: progress of the event loop meanwhile. */
async function ticksWhile(work: Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  await work.catch(() => {});
  clearInterval(timer);
  return ticks;
}

let extractor: Extractor | undefined;
afterEach(async () => {
  await extractor?.close();
  extractor = undefined;
});

describe('the extraction pool', () => {
  it('gives no_content for a page over the time limit, without holding the event loop, and replaces the worker', async () => {
    extractor = createExtractor({ threads: 1, timeoutMs: 3000, maxQueue: 4 });
    // The worker's start is not a page's time: it warms up first, and this waits for it.
    await extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' });

    const slow = extractor.extract({ kind: 'html', text: hugePage(), url: URL, format: 'markdown' });
    const ticks = await ticksWhile(slow);
    await expect(slow).rejects.toBeInstanceOf(ExtractionFailure);
    await expect(slow).rejects.toMatchObject({
      reason: 'no_content',
      message: expect.stringContaining('longer than 3000 ms'),
    });
    // Parsing on the main thread would have let no timer run until it ended.
    expect(ticks).toBeGreaterThanOrEqual(3);

    const after = await extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' });
    expect(after.content).toContain('A short and readable paragraph of text.');
  });

  it('refuses a page with ExtractorBusy when every worker is busy and the queue is full', async () => {
    extractor = createExtractor({ threads: 1, timeoutMs: 60_000, maxQueue: 1 });
    await extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' });
    const page = hugePage();
    const running = extractor.extract({ kind: 'html', text: page, url: URL, format: 'text' });
    const queued = extractor.extract({ kind: 'html', text: page, url: URL, format: 'text' });
    running.catch(() => {});
    queued.catch(() => {});
    await expect(extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' })).rejects.toBeInstanceOf(
      ExtractorBusy,
    );
  });

  it("takes a queued page off the queue when its caller's signal aborts", async () => {
    extractor = createExtractor({ threads: 1, timeoutMs: 60_000, maxQueue: 1 });
    await extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' });
    const running = extractor.extract({ kind: 'html', text: hugePage(), url: URL, format: 'text' });
    running.catch(() => {});
    const controller = new AbortController();
    const queued = extractor.extract(
      { kind: 'html', text: SMALL, url: URL, format: 'text' },
      { signal: controller.signal },
    );
    controller.abort(new Error('the client went away'));
    await expect(queued).rejects.toThrow('the client went away');
    // Its place in the queue is free again.
    const next = extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' });
    next.catch(() => {});
    const overflow = extractor.extract({ kind: 'html', text: SMALL, url: URL, format: 'text' });
    await expect(overflow).rejects.toBeInstanceOf(ExtractorBusy);
  });
});
