/*
 * The instant answers' cost in instructions, which do not move with the machine's load as times do:
 * `instantAnswer` and the response's JSON for the six queries of `npm run bench` (bench/instant-queries.ts),
 * a new number in each, 2 × N calls in all, from a build (DIST, default dist; `npm run build` first).
 *
 * Run it twice under callgrind, with two values of N, and divide the difference by the difference in calls:
 *   for n in 10000 30000; do DIST=dist N=$n valgrind --tool=callgrind --callgrind-out-file=/tmp/cg-$n.out \
 *     node --import tsx bench/instant-instructions.ts; done
 *   → (Collected at N=30000 − Collected at N=10000) / 40000 = instructions a call, start-up and compilation
 *   left out. callgrind_annotate on both files, subtracted the same way, gives them by function (V8's
 *   builtins and runtime by name; compiled JavaScript as bare addresses).
 * Compare two builds by copying one to another folder inside the project (DIST=dist-a). About 2 minutes a run.
 *
 * Steadier (on 2026-11-28 the difference above moved by up to 15 % between runs of one build, as
 * V8 optimized the code sooner or later under valgrind): WARM=<calls> runs that many calls
 * uncounted, then switches the counting on, so that only the 2 × N calls after them are counted:
 *   DIST=dist WARM=100000 N=10000 valgrind --tool=callgrind --instr-atstart=no \
 *     --callgrind-out-file=/tmp/cg.out node --import tsx bench/instant-instructions.ts
 *   → Collected / 20000 = instructions a call (about 50 s). Two runs of one build: 58,526 and
 *   61,482; WARM=20000 was not enough (66,457 to 90,756). The rest of the spread is V8's compiled
 *   code itself: compare two builds by the builtins a change touches too (callgrind_annotate),
 *   which are named and move by less than 0.1 % between runs.
 */
import { spawnSync } from 'node:child_process';
import type { InstantResponse } from '../src/search/instant/index.js';
import type { InstantAnswer, InstantDeps, InstantRequest } from '../src/search/instant/types.js';
import { INSTANT_QUERIES } from './instant-queries.js';

const dist = process.env.DIST ?? 'dist';
// The build's own modules (compiled by tsc, as the server runs them), not the sources through tsx.
const { instantAnswer } = (await import(`../${dist}/search/instant/index.js`)) as {
  instantAnswer: (deps: InstantDeps, request: InstantRequest) => Promise<InstantAnswer | null>;
};
// No upstream and no rates: none of the six waits for one.
const deps = { config: {}, upstream: {}, rates: { current: async () => null, reset() {} } } as unknown as InstantDeps;
const N = Number(process.env.N ?? 20000);
let bytes = 0;
async function run(from: number, calls: number): Promise<void> {
  for (let i = from; i < from + calls; i++) {
    const q = INSTANT_QUERIES[i % INSTANT_QUERIES.length]!(i);
    const answer = await instantAnswer(deps, { q, lang: '', ip: '127.0.0.1', userAgent: 'bench' });
    if (answer === null) throw new Error(`no answer for ${q}`);
    const body: InstantResponse = { query: q, answer };
    bytes += JSON.stringify(body).length;
  }
}
const warm = Number(process.env.WARM ?? 0);
if (warm > 0) {
  // Uncounted calls first (valgrind --instr-atstart=no), then the counting is switched on: the
  // figure is then the warm code's alone, without the calls that ran before V8 optimized it.
  await run(0, warm);
  const on = spawnSync('callgrind_control', ['--instr=on', String(process.pid)], { encoding: 'utf8' });
  if (on.status !== 0) throw new Error(`callgrind_control: ${on.stderr}${on.stdout}`);
}
await run(warm, 2 * N);
// Printed so that no call can be left out as unused; the same for two builds that answer alike.
console.log(`${2 * N} calls, ${bytes} bytes of JSON`);
