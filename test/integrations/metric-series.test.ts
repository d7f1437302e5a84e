import { AggregatorRegistry, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LabelledCounter, LabelledHistogram } from '../../src/metrics/series.js';
import { parsePrometheusText, sampleValue } from './prometheus-text.js';

/*
 * The request-path counters and histograms (src/metrics/series.ts), read the
 * way Prometheus reads them: prom-client's registry writes the text, the
 * strict parser reads it back; and summed across workers as a scrape of a
 * cluster sums them.
 */

function family(registry: Registry) {
  const calls = new LabelledCounter({
    name: 't_calls_total',
    help: 'Calls.',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const latency = new LabelledHistogram({
    name: 't_latency_seconds',
    help: 'Latency.',
    labelNames: ['provider'],
    buckets: [0.5, 0.1, 1],
    registers: [registry],
  });
  return { calls, latency };
}

describe('labelled counters and histograms', () => {
  it('counts each label set on its own and writes them as counter samples', async () => {
    const registry = new Registry();
    const { calls } = family(registry);
    const ok = calls.child('brave', 'ok');
    ok.inc();
    ok.inc();
    calls.child('brave', 'timeout').inc(3);
    expect(calls.child('brave', 'ok')).toBe(ok);
    calls.child('mojeek', 'ok');

    const families = parsePrometheusText(await registry.metrics());
    expect(families.get('t_calls_total')?.type).toBe('counter');
    expect(sampleValue(families, 't_calls_total', { provider: 'brave', outcome: 'ok' })).toBe(2);
    expect(sampleValue(families, 't_calls_total', { provider: 'brave', outcome: 'timeout' })).toBe(3);
    // A series asked for but never counted is present at zero.
    expect(sampleValue(families, 't_calls_total', { provider: 'mojeek', outcome: 'ok' })).toBe(0);
  });

  it('puts an observation in the first bucket whose bound it does not exceed, cumulative up to +Inf', async () => {
    const registry = new Registry();
    const { latency } = family(registry);
    const brave = latency.child('brave');
    for (const v of [0.05, 0.1, 0.3, 0.5, 2]) brave.observe(v);
    brave.observe(Number.NaN);

    const families = parsePrometheusText(await registry.metrics());
    expect(families.get('t_latency_seconds')?.type).toBe('histogram');
    const bucket = (le: string) => sampleValue(families, 't_latency_seconds_bucket', { provider: 'brave', le });
    // Bounds sorted: 0.1, 0.5, 1. A value equal to a bound counts in that bound's bucket.
    expect([bucket('0.1'), bucket('0.5'), bucket('1'), bucket('+Inf')]).toEqual([2, 4, 4, 5]);
    expect(sampleValue(families, 't_latency_seconds_count', { provider: 'brave' })).toBe(5);
    expect(sampleValue(families, 't_latency_seconds_sum', { provider: 'brave' })).toBeCloseTo(2.95, 10);
  });

  it('sums every worker’s series when a cluster scrape aggregates them', async () => {
    const workers = [new Registry(), new Registry()];
    const [a, b] = workers.map(family);
    a!.calls.child('brave', 'ok').inc(2);
    b!.calls.child('brave', 'ok').inc(5);
    b!.calls.child('sepia', 'ok').inc();
    a!.latency.child('brave').observe(0.2);
    b!.latency.child('brave').observe(3);

    const merged = AggregatorRegistry.aggregate(await Promise.all(workers.map((r) => r.getMetricsAsJSON())));
    const families = parsePrometheusText(await merged.metrics());
    expect(sampleValue(families, 't_calls_total', { provider: 'brave', outcome: 'ok' })).toBe(7);
    expect(sampleValue(families, 't_calls_total', { provider: 'sepia', outcome: 'ok' })).toBe(1);
    expect(sampleValue(families, 't_latency_seconds_bucket', { provider: 'brave', le: '0.5' })).toBe(1);
    expect(sampleValue(families, 't_latency_seconds_bucket', { provider: 'brave', le: '+Inf' })).toBe(2);
    expect(sampleValue(families, 't_latency_seconds_sum', { provider: 'brave' })).toBeCloseTo(3.2, 10);
  });

  it('refuses a label set of the wrong length', () => {
    const { calls } = family(new Registry());
    expect(() => calls.child('brave')).toThrow(/2 label values expected/);
  });
});
