/*
 * The contents section of `npm run bench` (BENCH_ONLY=contents; also runs alone:
 * `node --import tsx bench/contents.ts [dataset]`). Page extraction (src/contents/extract/):
 *
 * 1. Quality: the text output of every page of scrapinghub's article-extraction-benchmark (181 real
 *    pages with their true article body), scored as its evaluate.py scores (bench/contents-score.ts:
 *    shingle precision, recall and F1). Target: F1 >= 0.955 (Readability.js scores 0.947 there,
 *    trafilatura 0.958).
 * 2. CPU per page: each page's extraction on this thread (process CPU time around the call), after
 *    one unmeasured pass over the set for the JIT; median and p95.
 * 3. The event loop: 4 clients extract pages continuously through the worker pool for
 *    BENCH_CONTENTS_SECONDS (15), while perf_hooks' monitorEventLoopDelay samples the main thread.
 *    Target: p99 delay < 20 ms. The same histogram over as long with no extraction is reported
 *    beside it: on a shared machine the main thread also waits for a core.
 *
 * The dataset stays out of the repository: its folder (with ground-truth.json and html/) is the
 * first argument or CONTENTS_BENCH_DATASET; without it the section says how to get it and is
 * skipped. Prints the report's lines, then one JSON line of the figures (run.ts reads it); run
 * alone, it also writes them to bench/results/ (latest-contents, and a dated copy, YYYY-MM-DD-HHMM-contents).
 * Options: BENCH_CONTENTS_SECONDS (15), BENCH_CONTENTS_THREADS (the cores less one, at least 1).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { createExtractor } from '../src/contents/extract/index.js';
import { extractPage } from '../src/contents/extract/extract-page.js';
import { scorePages } from './contents-score.js';
import { writeRunFigures } from './results-file.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATASET_REPO = 'https://github.com/scrapinghub/article-extraction-benchmark';
const SECONDS = Number(process.env.BENCH_CONTENTS_SECONDS ?? 15);
// One core is left to the main thread (and on this bench, to the clients): on two cores, two
// workers delayed the event loop more and extracted no more pages than one.
const THREADS = Number(process.env.BENCH_CONTENTS_THREADS ?? Math.max(1, os.availableParallelism() - 1));
const CLIENTS = 4;

interface DatasetPage {
  id: string;
  url: string;
  html: string;
  truth: string;
}

function loadDataset(dir: string): DatasetPage[] {
  const truth = JSON.parse(readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<
    string,
    { articleBody?: string; url?: string }
  >;
  const files = new Set(readdirSync(path.join(dir, 'html')));
  return Object.entries(truth).map(([id, item]) => {
    const file = `${id}.html.gz`;
    if (!files.has(file)) throw new Error(`${dir}: html/${file} is missing`);
    return {
      id,
      url: item.url ?? 'https://example.com/',
      // As the benchmark's own extractors read them: the saved pages are UTF-8.
      html: gunzipSync(readFileSync(path.join(dir, 'html', file))).toString('utf8'),
      truth: item.articleBody ?? '',
    };
  });
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

async function extractText(page: DatasetPage): Promise<string> {
  try {
    return (await extractPage({ kind: 'html', text: page.html, url: page.url, format: 'text' })).content;
  } catch {
    return '';
  }
}

async function quality(pages: DatasetPage[]) {
  for (const page of pages) await extractText(page);
  const cpuMs: number[] = [];
  const scored: { truth: string; prediction: string }[] = [];
  let empty = 0;
  for (const page of pages) {
    const before = process.cpuUsage();
    const prediction = await extractText(page);
    const used = process.cpuUsage(before);
    cpuMs.push((used.user + used.system) / 1000);
    if (!prediction) empty++;
    scored.push({ truth: page.truth, prediction });
  }
  cpuMs.sort((a, b) => a - b);
  return {
    ...scorePages(scored),
    pages: pages.length,
    empty,
    cpuMedianMs: quantile(cpuMs, 0.5),
    cpuP95Ms: quantile(cpuMs, 0.95),
  };
}

// monitorEventLoopDelay records each whole interval of its timer; the delay is what exceeds this.
const RESOLUTION_MS = 10;
const delayMs = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);

/** The main thread's timer delay with nothing to do, for as long: what the machine alone gives. */
async function idleDelay() {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  histogram.disable();
  return { p50Ms: delayMs(histogram.percentile(50)), p99Ms: delayMs(histogram.percentile(99)) };
}

async function eventLoop(pages: DatasetPage[]) {
  const extractor = createExtractor({ threads: THREADS, timeoutMs: 10_000, maxQueue: CLIENTS * 2 });
  // The workers' warm-up first, outside the measured window.
  await Promise.all(
    Array.from({ length: THREADS }, () =>
      extractor.extract({ kind: 'html', text: pages[0]!.html, url: pages[0]!.url, format: 'markdown' }),
    ),
  );
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let next = 0;
  let done = 0;
  let failed = 0;
  const until = performance.now() + SECONDS * 1000;
  const elu = performance.eventLoopUtilization();
  histogram.enable();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (performance.now() < until) {
        const page = pages[next++ % pages.length]!;
        const format = (next + client) % 2 === 0 ? 'markdown' : 'text';
        try {
          await extractor.extract({ kind: 'html', text: page.html, url: page.url, format });
          done++;
        } catch {
          failed++;
        }
      }
    }),
  );
  histogram.disable();
  const busy = performance.eventLoopUtilization(elu).utilization;
  await extractor.close();
  const idle = await idleDelay();
  return {
    idleDelayP50Ms: idle.p50Ms,
    idleDelayP99Ms: idle.p99Ms,
    seconds: SECONDS,
    threads: THREADS,
    clients: CLIENTS,
    pages: done,
    failed,
    pagesPerSecond: done / SECONDS,
    /** The share of the time the main thread was busy (perf_hooks' event loop utilization). */
    mainThreadBusy: busy,
    delayP50Ms: delayMs(histogram.percentile(50)),
    delayP99Ms: delayMs(histogram.percentile(99)),
    delayMaxMs: delayMs(histogram.max),
  };
}

export interface ContentsFigures {
  skipped?: string;
  quality?: Awaited<ReturnType<typeof quality>>;
  eventLoop?: Awaited<ReturnType<typeof eventLoop>>;
}

async function main() {
  const dir = process.argv[2] ?? process.env.CONTENTS_BENCH_DATASET;
  const lines: string[] = ['## Page contents (extraction)', ''];
  let figures: ContentsFigures;
  if (!dir || !existsSync(path.join(dir, 'ground-truth.json'))) {
    const skipped = `skipped: no dataset${dir ? ` at ${dir}` : ''}. Get it with \`git clone ${DATASET_REPO}\` and give its folder as CONTENTS_BENCH_DATASET (or bench/contents.ts's argument).`;
    lines.push(skipped);
    figures = { skipped };
  } else {
    const pages = loadDataset(dir);
    const q = await quality(pages);
    const e = await eventLoop(pages);
    figures = { quality: q, eventLoop: e };
    const f = (n: number, d = 3) => n.toFixed(d);
    lines.push(
      `scrapinghub article-extraction-benchmark, ${q.pages} pages, text format (evaluate.py's scoring); ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}.`,
      '',
      '| measure | value | target |',
      '|---|---|---|',
      `| F1 | ${f(q.f1)} | ≥ 0.955 ${q.f1 >= 0.955 ? '(met)' : '(NOT MET)'} |`,
      `| precision | ${f(q.precision)} | |`,
      `| recall | ${f(q.recall)} | |`,
      `| accuracy (tokens equal) | ${f(q.accuracy)} | |`,
      `| pages with no content | ${q.empty} | |`,
      `| extraction CPU per page, median / p95 | ${f(q.cpuMedianMs, 1)} / ${f(q.cpuP95Ms, 1)} ms | |`,
      `| event loop delay p50 / p99 / max, ${e.clients} clients, ${e.threads} workers, ${e.seconds} s | ${f(e.delayP50Ms, 1)} / ${f(e.delayP99Ms, 1)} / ${f(e.delayMaxMs, 1)} ms | p99 < 20 ms ${e.delayP99Ms < 20 ? '(met)' : '(NOT MET)'} |`,
      `| the same with no extraction (the machine's floor), p50 / p99 | ${f(e.idleDelayP50Ms, 1)} / ${f(e.idleDelayP99Ms, 1)} ms | |`,
      `| pages extracted under that load (failed) | ${e.pages} (${e.failed}), ${f(e.pagesPerSecond, 1)}/s | |`,
      `| main thread busy under that load (event loop utilization) | ${f(e.mainThreadBusy * 100, 1)} % | |`,
    );
  }
  for (const l of lines) process.stdout.write(`${l}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  return { lines, figures };
}

const startedAt = new Date();
const { lines, figures } = await main();
// Run by run.ts, the figures go into that run's report instead.
if (!process.env.BENCH_CONTENTS_FROM_RUN && !figures.skipped) {
  const written = writeRunFigures(path.join(root, 'bench', 'results'), {
    at: startedAt,
    full: true,
    section: 'contents',
    markdown: lines.join('\n'),
    json: { at: startedAt.toISOString(), machine: { cpus: os.cpus().length, node: process.version }, ...figures },
  });
  process.stderr.write(`figures written to ${written.map((f) => path.relative(root, f)).join(', ')}\n`);
}
