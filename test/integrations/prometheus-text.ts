/*
 * A strict parser of the Prometheus text exposition format (0.0.4), for the
 * tests: every line must be a HELP, a TYPE or a sample of a declared family;
 * label values properly quoted and escaped; values numbers (or +Inf, -Inf,
 * NaN); histograms with cumulative buckets ending in le="+Inf" = _count.
 * Throws on the first line it cannot read.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: number): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  // prom-client writes NaN as `Nan` (a fresh event-loop histogram); Prometheus reads values with Go's
  // ParseFloat, which takes any case of NaN.
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value "${text}"`);
  return Number(text);
}

function unescapeLabel(value: string): string {
  return value.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** The family a sample name belongs to (histogram and summary samples carry suffixes). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(name);
  if (direct) return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (raw === '') return;
    if (raw.startsWith('# HELP ')) {
      const rest = raw.slice(7);
      const sp = rest.indexOf(' ');
      const name = sp < 0 ? rest : rest.slice(0, sp);
      if (!NAME.test(name)) throw new Error(`line ${n}: bad metric name in HELP`);
      const f = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      f.help = sp < 0 ? '' : rest.slice(sp + 1);
      families.set(name, f);
      return;
    }
    if (raw.startsWith('# TYPE ')) {
      const [name, type, extra] = raw.slice(7).split(' ');
      if (!name || !NAME.test(name) || !type || !TYPES.has(type) || extra !== undefined) {
        throw new Error(`line ${n}: bad TYPE line`);
      }
      const f = families.get(name) ?? { name, type: 'untyped', help: '', samples: [] };
      if (f.samples.length > 0) throw new Error(`line ${n}: TYPE after samples of ${name}`);
      f.type = type as Family['type'];
      families.set(name, f);
      return;
    }
    if (raw.startsWith('#')) return;
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
    if (!nameMatch) throw new Error(`line ${n}: no metric name`);
    const name = nameMatch[0];
    let rest = raw.slice(name.length);
    const labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      rest = rest.slice(1);
      while (!rest.startsWith('}')) {
        const m = LABEL.exec(rest);
        if (!m) throw new Error(`line ${n}: bad label in "${raw}"`);
        if (m[1]! in labels) throw new Error(`line ${n}: label ${m[1]} twice`);
        labels[m[1]!] = unescapeLabel(m[2]!);
        rest = rest.slice(m[0].length);
        if (rest.startsWith(',')) rest = rest.slice(1);
        else if (!rest.startsWith('}')) throw new Error(`line ${n}: expected , or }`);
      }
      rest = rest.slice(1);
    }
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2)
      throw new Error(`line ${n}: bad sample "${raw}"`);
    const value = parseValue(parts[0]!, n);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`line ${n}: bad timestamp`);
    const family = familyOf(name, families);
    if (!family) throw new Error(`line ${n}: sample ${name} of no declared family`);
    family.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of f.samples) {
    const g = groups.get(keyOf(s.labels)) ?? { buckets: [] };
    groups.set(keyOf(s.labels), g);
    if (s.name === `${f.name}_bucket`) {
      if (s.labels.le === undefined) throw new Error(`${f.name}: bucket without le`);
      g.buckets.push([parseValue(s.labels.le, 0), s.value]);
    } else if (s.name === `${f.name}_count`) g.count = s.value;
  }
  for (const [key, g] of groups) {
    let previous = -1;
    for (const [, v] of g.buckets) {
      if (v < previous) throw new Error(`${f.name}${key}: buckets not cumulative`);
      previous = v;
    }
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY || last[1] !== g.count) {
      throw new Error(`${f.name}${key}: le="+Inf" must equal _count`);
    }
  }
}

/** The value of the one sample of `name` whose labels include `labels` (undefined when none). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
