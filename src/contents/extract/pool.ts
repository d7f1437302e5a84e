/*
 * The extraction pool: pages are parsed in worker threads (piscina), never on the main thread.
 * Tasks wait in this module's own queue and go to piscina only when a worker is free, so that a
 * page's time limit counts its own parsing, not its wait; a page over the limit is aborted, which
 * makes piscina end its worker and start another, and answers no_content. A full queue is refused
 * at once (ExtractorBusy), so a burst of pages cannot pile up memory or latency.
 *
 * A worker's start (loading the parser and its libraries) is not charged to a page: each worker
 * first runs a warm-up page with no time limit, at the pool's start and after it replaced one.
 */
import { Piscina } from 'piscina';
import { ExtractionFailure, ExtractorBusy } from './errors.js';
import type { ExtractedPage, ExtractInput } from './types.js';
import type { WorkerAnswer } from './worker.js';
import { extractionWorkerFile } from './worker-file.js';

export interface ExtractorOptions {
  /** Worker threads. */
  threads: number;
  /** The most one page may take in its worker. */
  timeoutMs: number;
  /** Pages that may wait for a free worker; one more is refused with ExtractorBusy. */
  maxQueue: number;
}

export interface Extractor {
  extract(input: ExtractInput, opts?: { signal?: AbortSignal }): Promise<ExtractedPage>;
  close(): Promise<void>;
}

// Through the HTML path, so that its code is loaded and has run once before a page is timed.
const WARM_UP: ExtractInput = {
  kind: 'html',
  text: '<html><body><p>Warm-up.</p></body></html>',
  url: 'https://localhost/',
  format: 'markdown',
};

const WORKER_NICE_INCREMENT = 10;

// A worker holds one parsed page at a time; a page that would need more than this is not one to read.
const WORKER_HEAP_MB = 512;

interface Waiting {
  input: ExtractInput;
  signal: AbortSignal | undefined;
  resolve: (page: ExtractedPage) => void;
  reject: (err: unknown) => void;
  onAbort: () => void;
}

export function createExtractor(options: ExtractorOptions): Extractor {
  const threads = Math.max(1, Math.floor(options.threads));
  const { filename, execArgv } = extractionWorkerFile();
  const pool = new Piscina<ExtractInput, WorkerAnswer>({
    filename,
    execArgv,
    minThreads: threads,
    maxThreads: threads,
    concurrentTasksPerWorker: 1,
    // Extraction is background work: where the OS allows it (Linux), the workers yield the CPU to
    // the main thread, whose event loop answers /up, searches and every other request.
    niceIncrement: WORKER_NICE_INCREMENT,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  const waiting: Waiting[] = [];
  // Slots taken, by pages and by warm-ups; a page is handed to piscina only when one is free.
  let running = 0;
  let closed = false;

  function warmUp(): void {
    running++;
    pool
      .run(WARM_UP)
      .catch(() => {})
      .finally(() => {
        running--;
        next();
      });
  }
  for (let i = 0; i < threads; i++) warmUp();

  async function run(
    input: ExtractInput,
    signal: AbortSignal | undefined,
    outcome: { workerEnded: boolean },
  ): Promise<ExtractedPage> {
    const limit = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      limit.abort(new ExtractionFailure(`the page took longer than ${options.timeoutMs} ms to extract`));
    }, options.timeoutMs);
    const onCallerAbort = () => limit.abort(signal?.reason);
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      const answer = await pool.run(input, { signal: limit.signal });
      if (answer.ok) return answer.page;
      throw answer.noContent
        ? new ExtractionFailure(answer.message)
        : new ExtractionFailure(`the page could not be extracted: ${answer.message}`);
    } catch (err) {
      if (err instanceof ExtractionFailure) throw err;
      outcome.workerEnded = true;
      if (timedOut) throw limit.signal.reason as ExtractionFailure;
      if (signal?.aborted) throw signal.reason;
      // The worker died on this page (out of memory, a crash in a library): nothing readable.
      throw new ExtractionFailure(`the page could not be extracted: ${err instanceof Error ? err.message : err}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  function start(input: ExtractInput, signal: AbortSignal | undefined): Promise<ExtractedPage> {
    running++;
    const outcome = { workerEnded: false };
    return run(input, signal, outcome).then(
      (page) => {
        running--;
        next();
        return page;
      },
      (err: unknown) => {
        running--;
        // An aborted page's worker was ended: its replacement warms up before it takes a page.
        if (outcome.workerEnded && !closed) warmUp();
        else next();
        throw err;
      },
    );
  }

  function next(): void {
    while (running < threads && waiting.length > 0) {
      const task = waiting.shift()!;
      task.signal?.removeEventListener('abort', task.onAbort);
      start(task.input, task.signal).then(task.resolve, task.reject);
    }
  }

  return {
    extract(input, opts = {}) {
      const { signal } = opts;
      if (closed) return Promise.reject(new Error('the extractor is closed'));
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (running < threads) return start(input, signal);
      if (waiting.length >= options.maxQueue) return Promise.reject(new ExtractorBusy());
      return new Promise<ExtractedPage>((resolve, reject) => {
        const task: Waiting = {
          input,
          signal,
          resolve,
          reject,
          onAbort: () => {
            const at = waiting.indexOf(task);
            if (at >= 0) waiting.splice(at, 1);
            reject(signal?.reason);
          },
        };
        signal?.addEventListener('abort', task.onAbort, { once: true });
        waiting.push(task);
      });
    },
    async close() {
      closed = true;
      for (const task of waiting.splice(0)) {
        task.signal?.removeEventListener('abort', task.onAbort);
        task.reject(new Error('the extractor is closed'));
      }
      await pool.destroy();
    },
  };
}
