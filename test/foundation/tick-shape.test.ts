import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { keptTickObject } from '../../src/tick-shape.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

describe('the kept nextTick object (tick-shape.ts)', () => {
  it('is a tick object that process.nextTick built: its two async id symbols, a callback, no args', () => {
    const tick = keptTickObject() as Record<string | symbol, unknown>;
    expect(tick).toBeTypeOf('object');
    const symbols = Object.getOwnPropertySymbols(tick).map((s) => s.description);
    // Node 24 adds a third (its async context frame).
    expect(symbols).toEqual(expect.arrayContaining(['async_id_symbol', 'trigger_async_id_symbol']));
    expect(tick.callback).toBeTypeOf('function');
    expect(tick.args).toBeUndefined();
  });

  it('new tick objects still have its hidden class after full collections with no tick pending', () => {
    // V8's own check (%HaveSameMap) in a process of its own, with the flags it needs.
    const script = `
      const { keptTickObject, nextTickObject } = await import(${JSON.stringify(path.join(root, 'src/tick-shape.ts'))});
      setTimeout(() => {
        globalThis.gc();
        globalThis.gc();
        const tick = nextTickObject();
        console.log(JSON.stringify({ same: %HaveSameMap(keptTickObject(), tick), asyncId: typeof tick[Object.getOwnPropertySymbols(tick)[0]] }));
      }, 20);
    `;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', script],
      { cwd: root, encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout.trim())).toEqual({ same: true, asyncId: 'number' });
  });
});
