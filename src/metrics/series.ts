import type { Registry } from 'prom-client';

/*
 * Counters and histograms for the per-request path, exposed through
 * prom-client's registry (text format and the cluster aggregation read the
 * same JSON as prom-client's own metrics give).
 *
 * prom-client's labelled children validate and hash their labels again on
 * every inc() or observe(), and a web search makes about a dozen such calls.
 * Here a child is a plain object, found once per label set by the caller and
 * then updated with a few additions. Label values come from bounded sets
 * (routes, providers, statuses).
 */

type Labels = Record<string, string>;

interface MetricOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
}

/** A sample as prom-client's registry reads it (`metricName` for a histogram's _bucket, _sum and _count). */
interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

abstract class LabelledMetric<Child extends { labels: Labels }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  private readonly labelNames: readonly string[];
  private series = new Map<string, Child>();

  constructor(options: MetricOptions) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  protected abstract create(labels: Labels): Child;
  protected abstract samples(child: Child): Sample[];

  /** The series for these label values, in labelNames order (created at zero on first use). */
  child(...values: string[]): Child {
    const key = values.join('\u0000');
    let child = this.series.get(key);
    if (!child) {
      if (values.length !== this.labelNames.length) {
        throw new TypeError(`${this.name}: ${this.labelNames.length} label values expected, got ${values.length}`);
      }
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i]!;
      });
      child = this.create(labels);
      this.series.set(key, child);
    }
    return child;
  }

  /** What prom-client's registry asks of a metric. */
  get(): { name: string; help: string; type: string; values: Sample[]; aggregator: string } {
    const values: Sample[] = [];
    for (const child of this.series.values()) values.push(...this.samples(child));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series = new Map();
  }
}

export interface CounterSeries {
  readonly labels: Labels;
  value: number;
  inc(by?: number): void;
}

export class LabelledCounter extends LabelledMetric<CounterSeries> {
  readonly type = 'counter';

  protected create(labels: Labels): CounterSeries {
    return {
      labels,
      value: 0,
      inc(by = 1) {
        this.value += by;
      },
    };
  }

  protected samples(child: CounterSeries): Sample[] {
    return [{ labels: child.labels, value: child.value }];
  }
}

export interface HistogramSeries {
  readonly labels: Labels;
  /** Observations at or under each bound (not cumulative; summed on export). */
  readonly counts: number[];
  sum: number;
  count: number;
  observe(value: number): void;
}

export class LabelledHistogram extends LabelledMetric<HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(options: MetricOptions & { buckets: readonly number[] }) {
    super(options);
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(labels: Labels): HistogramSeries {
    const bounds = this.bounds;
    return {
      labels,
      counts: bounds.map(() => 0),
      sum: 0,
      count: 0,
      observe(value) {
        // A value that is not a number would poison the sum for good: it is not counted.
        if (!Number.isFinite(value)) return;
        this.sum += value;
        this.count++;
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]!) {
            this.counts[i]!++;
            return;
          }
        }
      },
    };
  }

  protected samples(child: HistogramSeries): Sample[] {
    const out: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += child.counts[i]!;
      out.push({ labels: { ...child.labels, le: String(bound) }, value: cumulative, metricName: bucket });
    });
    out.push({ labels: { ...child.labels, le: '+Inf' }, value: child.count, metricName: bucket });
    out.push({ labels: { ...child.labels }, value: child.sum, metricName: `${this.name}_sum` });
    out.push({ labels: { ...child.labels }, value: child.count, metricName: `${this.name}_count` });
    return out;
  }
}
