import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type HeapProfile, heapSummaryMarkdown, summarizeHeap } from '../../bench/heap-summary.js';

/*
 * bench/heap-summary.ts: what `HEAP=1 npx tsx bench/profile-web.ts` prints. Run on a small profile
 * of the shape V8's sampling heap profiler writes; no server is profiled here.
 */

const root = '/srv/sift';
const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0 });

// Bytes a node allocated itself (selfSize) are counted on it, not on its callers.
const profile: HeapProfile = {
  head: {
    callFrame: frame('(root)', ''),
    selfSize: 0,
    children: [
      {
        callFrame: frame('handler', `file://${root}/src/search/web.ts`),
        selfSize: 10 * 1024,
        children: [
          {
            callFrame: frame('parse', `file://${root}/node_modules/zod/v4/core/schemas.js`),
            selfSize: 30 * 1024,
            children: [{ callFrame: frame('', ''), selfSize: 20 * 1024, children: [] }],
          },
          {
            // A CommonJS module's frames name their file by path.
            callFrame: frame('write', `${root}/node_modules/pino/lib/proto.js`),
            selfSize: 4 * 1024,
            children: [],
          },
        ],
      },
      { callFrame: frame('slice', 'node:buffer'), selfSize: 16 * 1024, children: [] },
    ],
  },
};

describe('the heap profile summary', () => {
  it('gives each allocation site its own bytes, by module, per request', () => {
    const s = summarizeHeap([profile], root, 2);
    expect(s.kbPerRequest).toBe(40);
    expect(s.modules.map((m) => [m.name, m.kbPerRequest])).toEqual([
      ['zod', 15],
      ['(native)', 10],
      ['node:buffer', 8],
      [path.join('src', 'search', 'web.ts'), 5],
      ['pino', 2],
    ]);
    expect(s.modules[0]!.share).toBeCloseTo(15 / 40);
  });

  it('adds the profiles of several processes together', () => {
    const s = summarizeHeap([profile, profile], root, 2);
    expect(s.kbPerRequest).toBe(80);
    expect(s.functions.find((f) => f.name === 'parse (zod)')?.kbPerRequest).toBe(30);
  });

  it('prints the top rows of both tables', () => {
    const text = heapSummaryMarkdown(summarizeHeap([profile], root, 2), 2);
    expect(text).toContain('Sampled: 40.0 KB a request.');
    expect(text).toContain('| zod | 15.0 | 37.5 |');
    expect(text).toContain('| parse (zod) | 15.0 | 37.5 |');
    // Two rows a table: node:buffer (third by module) is left out.
    expect(text).not.toContain('node:buffer');
  });
});
