/*
 * The instant answers' own cost, in one process with no HTTP: `instantAnswer` and the response's
 * JSON for each query of `npm run bench`'s instant section (bench/instant-queries.ts), a new number
 * in each, and for all of them in turn.
 *
 * Each is timed twice:
 * - warm: call after call, as a microbenchmark does, with the answer code and its data in the
 *   CPU's caches;
 * - disturbed: DISTURB_MB (default 4) MB of memory read between two calls, outside the timed part.
 *   In the server, each answer comes between other requests' HTTP parsing, hooks, logging and
 *   allocation, which push the answer code's data out of the caches the same way.
 *
 * The second figure is nearer what the server pays. On the bench machine (2 MB of L2 a core, an L3
 * shared with other machines) the rotation took 5.3–5.8 µs a call warm, and 7.5–15 µs disturbed,
 * depending on the moment: in the server, knocking the answers out saved about 12 µs a request
 * (bench/README.md).
 *
 * `npx tsx bench/instant-loop.ts` (about a minute; CALLS=<calls per measure>, default 10000;
 * DISTURB_MB=<MB>).
 */
import { instantAnswer, type InstantResponse } from '../src/search/instant/index.js';
import type { InstantAnswer, InstantDeps } from '../src/search/instant/types.js';
import { testConfig } from '../test/helpers/app.js';
import { INSTANT_QUERIES } from './instant-queries.js';

const CALLS = Number(process.env.CALLS ?? 10_000);
const DISTURB_MB = Number(process.env.DISTURB_MB ?? 4);
const ROUNDS = 2;

const deps: InstantDeps = {
  config: testConfig(null),
  upstream: { call: () => Promise.reject(new Error('no upstream')), gather: () => Promise.resolve([]) },
  rates: { current: async () => null, reset() {} },
};

/** Read one number of every 64-byte line: each line comes into the cache, and the answer code's data goes out. */
const other = new Float64Array((DISTURB_MB * 1024 * 1024) / 8);
let sink = 0;
function disturbCaches(): void {
  for (let i = 0; i < other.length; i += 8) sink += other[i]!;
}

/** Mean µs a call of answer + JSON, over CALLS calls of the queries in turn (the last of ROUNDS rounds). */
async function measure(queries: readonly ((n: number) => string)[], disturbed: boolean): Promise<number> {
  let ns = 0n;
  for (let round = 0; round < ROUNDS; round++) {
    ns = 0n;
    for (let i = 0; i < CALLS; i++) {
      if (disturbed) disturbCaches();
      const n = round * CALLS + i;
      const q = queries[n % queries.length]!(n);
      const start = process.hrtime.bigint();
      const answer = await instantAnswer(deps, { q, lang: '', ip: '127.0.0.1', userAgent: 'bench' });
      if (answer === null) throw new Error(`no answer for ${q}`);
      sink += respond(q, answer).length;
      ns += process.hrtime.bigint() - start;
    }
  }
  return Number(ns) / CALLS / 1000;
}

function respond(q: string, answer: InstantAnswer): string {
  const body: InstantResponse = { query: q, answer };
  return JSON.stringify(body);
}

const rows: [string, ((n: number) => string)[]][] = [
  ['all six in turn', INSTANT_QUERIES],
  ...INSTANT_QUERIES.map((query): [string, ((n: number) => string)[]] => [query(17), [query]]),
];
// Once untimed first, so that no row pays for the compilation of the code.
await measure(INSTANT_QUERIES, false);
console.log(`| query (a new number in each) | warm µs | ${DISTURB_MB} MB read between calls µs |`);
console.log('|---|---|---|');
for (const [label, queries] of rows) {
  const warm = await measure(queries, false);
  const disturbed = await measure(queries, true);
  console.log(`| ${label} | ${warm.toFixed(2)} | ${disturbed.toFixed(2)} |`);
}
// Uses what the loops added up, so that no call could be left out as unused.
if (sink === 0) console.log('');
