import { describe, expect, it } from 'vitest';
import { retryAfterToMs } from '../../src/upstream/http.js';
import { ProviderSuspensions, RETRY_AFTER_MAX_MS } from '../../src/upstream/suspension.js';
import { type FailureKind, UpstreamError } from '../../src/providers/types.js';

/* The suspension rules on their own, on a clock the test moves. */

function setup(policy = { afterFailures: 3, firstMs: 5000, maxMs: 40_000 }) {
  let now = 1000;
  const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
  const log = {
    warn: (obj: unknown, msg?: string) => lines.push({ obj: obj as Record<string, unknown>, msg }),
    info: (obj: unknown, msg?: string) => lines.push({ obj: obj as Record<string, unknown>, msg }),
  };
  const s = new ProviderSuspensions(policy, log, () => now);
  return {
    s,
    lines,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const fail = (kind: FailureKind = 'timeout', status?: number, retryAfterMs?: number) =>
  new UpstreamError('provider_02', kind, 'failed', status, retryAfterMs);

describe('provider suspensions', () => {
  it('suspends after the configured failures of one kind in a row, for the first interval', () => {
    const { s, advance } = setup();
    s.failed(fail('http_status', 500));
    s.failed(fail('http_status', 500));
    expect(s.remainingMs('provider_02')).toBe(0);
    s.failed(fail('http_status', 500));
    expect(s.remainingMs('provider_02')).toBe(5000);
    expect(s.remainingMs('provider_01')).toBe(0);
    advance(4999);
    expect(s.remainingMs('provider_02')).toBe(1);
    advance(1);
    expect(s.remainingMs('provider_02')).toBe(0);
  });

  it('starts the count again when the provider fails another way (a run of different faults)', () => {
    const { s } = setup();
    const kinds = [
      fail('timeout'),
      fail('connect'),
      fail('http_status', 500),
      fail('http_status', 502),
      fail('bad_response', 200),
      fail('too_large', 200),
      fail('rate_limited', 429),
      fail('http_status', 310),
    ];
    for (const f of kinds) s.failed(f);
    expect(s.remainingMs('provider_02')).toBe(0);
    s.failed(fail('http_status', 310));
    s.failed(fail('http_status', 310));
    expect(s.remainingMs('provider_02')).toBe(5000);
  });

  it('suspends again on a failed trial of any kind once it has been suspended', () => {
    const { s, advance } = setup();
    for (let i = 0; i < 3; i++) s.failed(fail('timeout'));
    advance(5000);
    s.failed(fail('http_status', 503));
    expect(s.remainingMs('provider_02')).toBe(10_000);
  });

  it('doubles the interval for each failed trial after a suspension, up to the maximum', () => {
    const { s, advance } = setup();
    for (let i = 0; i < 3; i++) s.failed(fail());
    const intervals: number[] = [];
    for (let round = 0; round < 6; round++) {
      const left = s.remainingMs('provider_02');
      intervals.push(left);
      advance(left);
      s.failed(fail()); // the trial call fails at once
    }
    expect(intervals).toEqual([5000, 10_000, 20_000, 40_000, 40_000, 40_000]);
  });

  it('forgets the failures and lifts a suspension on a success', () => {
    const { s, lines } = setup();
    s.failed(fail());
    s.failed(fail());
    s.succeeded('provider_02');
    s.failed(fail());
    s.failed(fail());
    expect(s.remainingMs('provider_02')).toBe(0);
    s.failed(fail());
    expect(s.remainingMs('provider_02')).toBe(5000);
    s.succeeded('provider_02');
    expect(s.remainingMs('provider_02')).toBe(0);
    expect(lines.map((l) => l.msg)).toEqual([
      'provider suspended: searches skip it until the interval ends',
      'provider answers again: suspension lifted',
    ]);
    // Back to the first interval, not a doubled one.
    for (let i = 0; i < 3; i++) s.failed(fail());
    expect(s.remainingMs('provider_02')).toBe(5000);
  });

  it('does not extend a suspension with the failures of calls that were already in flight', () => {
    const { s, advance } = setup();
    for (let i = 0; i < 3; i++) s.failed(fail());
    advance(1000);
    for (let i = 0; i < 50; i++) s.failed(fail());
    expect(s.remainingMs('provider_02')).toBe(4000);
    advance(4000);
    s.failed(fail());
    expect(s.remainingMs('provider_02')).toBe(10_000);
  });

  it('suspends at once for the wait a 429 or 503 asks with Retry-After, capped at an hour', () => {
    const { s, advance } = setup();
    s.failed(fail('rate_limited', 429, 2000));
    expect(s.remainingMs('provider_02')).toBe(2000);
    advance(2000);
    s.failed(fail('http_status', 503, 7_200_000));
    expect(s.remainingMs('provider_02')).toBe(RETRY_AFTER_MAX_MS);
  });

  it('leaves a provider alone for upstream answers to the request itself (400, 404, 414, 422)', () => {
    const { s } = setup({ afterFailures: 1, firstMs: 5000, maxMs: 5000 });
    for (const status of [400, 404, 405, 410, 413, 414, 422]) s.failed(fail('http_status', status));
    s.failed(fail('not_configured'));
    expect(s.remainingMs('provider_02')).toBe(0);
    for (const status of [401, 403, 408, 302, 500, 502]) {
      const t = setup({ afterFailures: 1, firstMs: 5000, maxMs: 5000 });
      t.s.failed(fail('http_status', status));
      expect(t.s.remainingMs('provider_02'), `HTTP ${status}`).toBe(5000);
    }
  });

  it('never suspends on failures with afterFailures 0, but still honours Retry-After', () => {
    const { s } = setup({ afterFailures: 0, firstMs: 5000, maxMs: 5000 });
    for (let i = 0; i < 100; i++) s.failed(fail());
    expect(s.remainingMs('provider_02')).toBe(0);
    s.failed(fail('rate_limited', 429, 3000));
    expect(s.remainingMs('provider_02')).toBe(3000);
    expect(s.list()).toEqual([{ provider: 'provider_02', remainingMs: 3000, failures: 1 }]);
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(retryAfterToMs('30', now)).toBe(30_000);
    expect(retryAfterToMs(' 1 ', now)).toBe(1000);
    expect(retryAfterToMs('Mon, 23 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterToMs('Mon, 23 Nov 2026 11:59:00 GMT', now)).toBeUndefined();
    expect(retryAfterToMs('0', now)).toBeUndefined();
    expect(retryAfterToMs('-5', now)).toBeUndefined();
    expect(retryAfterToMs('1.5', now)).toBeUndefined();
    expect(retryAfterToMs('soon', now)).toBeUndefined();
    expect(retryAfterToMs('', now)).toBeUndefined();
  });
});

describe('provider suspensions shared between workers', () => {
  /** Two workers' suspensions, each telling the other what it sees (as the cluster primary relays it). */
  function pair() {
    const a = setup();
    const b = setup();
    const notes: unknown[] = [];
    a.s.shareWith((note) => {
      notes.push(note);
      b.s.apply(structuredClone(note));
    });
    b.s.shareWith((note) => {
      notes.push(note);
      a.s.apply(structuredClone(note));
    });
    return { a, b, notes };
  }

  it('suspends on both workers when the failures in a row are split between them, logged once', () => {
    const { a, b } = pair();
    a.s.failed(fail('http_status', 500));
    b.s.failed(fail('http_status', 500));
    expect(a.s.remainingMs('provider_02')).toBe(0);
    a.s.failed(fail('http_status', 500));
    expect(a.s.remainingMs('provider_02')).toBe(5000);
    expect(b.s.remainingMs('provider_02')).toBe(5000);
    expect(a.lines.filter((l) => l.msg?.startsWith('provider suspended'))).toHaveLength(1);
    expect(b.lines).toHaveLength(0);
  });

  it('suspends both at once on a Retry-After seen by one, and a success on either lifts both', () => {
    const { a, b } = pair();
    b.s.failed(fail('rate_limited', 429, 30_000));
    expect(a.s.remainingMs('provider_02')).toBe(30_000);
    a.advance(30_000);
    b.advance(30_000);
    b.s.succeeded('provider_02');
    a.s.failed(fail('timeout'));
    // The streak was forgotten on both: one timeout is not a suspension.
    expect(a.s.remainingMs('provider_02')).toBe(0);
    expect(b.s.remainingMs('provider_02')).toBe(0);
    expect(b.lines.map((l) => l.msg)).toContain('provider answers again: suspension lifted');
  });

  it('shares only news: no note for an uncounted failure, a call in flight, or a success without a streak', () => {
    const { a, b, notes } = pair();
    a.s.succeeded('provider_02');
    a.s.failed(fail('http_status', 404));
    expect(notes).toHaveLength(0);
    for (let i = 0; i < 3; i++) b.s.failed(fail('timeout'));
    expect(notes).toHaveLength(3);
    a.s.failed(fail('timeout'));
    expect(notes).toHaveLength(3);
    // Applied notes are not passed on again (no echo between the workers).
    expect(notes.every((n) => (n as { provider: string }).provider === 'provider_02')).toBe(true);
  });
});
