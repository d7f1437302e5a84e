import type { HistoryBucket, ProviderHealth, StatusRow } from './health-store.js';
import type { LimitsView } from './pacing/limits-view.js';
import { healthOf } from './health-store.js';
import { GROUPS } from '../providers/registry.js';
import type { ProviderDescriptor } from '../providers/types.js';

/*
 * What the /status page shows, computed from the registry, the status rows
 * and the hourly history: a summary, one entry per configured provider
 * grouped as in the registry, and two availability bars per provider
 * (30 days by day, 24 hours by hour). Pure: the route reads, this shapes.
 */

export type BarLevel = 'ok' | 'partial' | 'bad' | 'none';

export interface Bar {
  level: BarLevel;
  /** Hover text: the period, its availability and failure count. */
  title: string;
}

export interface Moment {
  iso: string;
  /** "3 minutes ago" */
  relative: string;
  /** "2025-11-21 09:00:12 UTC" */
  exact: string;
}

export interface ProviderView {
  slug: string;
  name: string;
  state: ProviderHealth['state'];
  stateLabel: string;
  monitor: ProviderDescriptor['monitor'];
  monitorLabel: string;
  lastOk: Moment | null;
  checked: Moment | null;
  lastError: string;
  /** Pacing, budget and the upstream's own count, in words ('' when nothing limits the provider). */
  limits: string;
  daily: Bar[];
  dailySummary: string;
  hourly: Bar[];
  hourlySummary: string;
}

export interface StatusPageView {
  summary: { kind: 'issues' | 'operational' | 'pending'; headline: string; detail: string };
  counts: { total: number; up: number; down: number; unknown: number };
  groups: { key: string; label: string; providers: ProviderView[] }[];
  databaseUnavailable: boolean;
  generated: Moment;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const STATE_LABEL = { up: 'Operational', down: 'Down', unknown: 'Unknown' } as const;
const MONITOR_LABEL = { query: 'Observed from searches', probe: 'Active check' } as const;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function relativeTime(then: Date, now: Date): string {
  const s = Math.round((now.getTime() - then.getTime()) / 1000);
  if (s < 0) return 'just now';
  if (s < 45) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return `${plural(m, 'minute')} ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${plural(h, 'hour')} ago`;
  const d = Math.round(h / 24);
  if (d < 45) return `${plural(d, 'day')} ago`;
  return `on ${then.toISOString().slice(0, 10)}`;
}

export function exactTime(d: Date): string {
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function moment(d: Date | null, now: Date): Moment | null {
  return d ? { iso: d.toISOString(), relative: relativeTime(d, now), exact: exactTime(d) } : null;
}

function level(successes: number, failures: number): BarLevel {
  const total = successes + failures;
  if (total === 0) return 'none';
  if (failures === 0) return 'ok';
  return successes / total >= 0.5 ? 'partial' : 'bad';
}

function percent(successes: number, failures: number): string {
  const total = successes + failures;
  const p = (successes / total) * 100;
  return `${p === 100 || p === 0 ? p.toFixed(0) : p.toFixed(1)}%`;
}

function barTitle(period: string, successes: number, failures: number): string {
  const total = successes + failures;
  if (total === 0) return `${period}: no data`;
  return `${period}: ${percent(successes, failures)} available, ${plural(failures, 'failure')} in ${plural(total, 'call')}`;
}

function summaryOf(label: string, totals: { s: number; f: number }, failedPeriods: number, periodWord: string): string {
  if (totals.s + totals.f === 0) return `${label}: no data yet`;
  if (failedPeriods === 0) return `${label}: ${percent(totals.s, totals.f)} available, no failures`;
  return `${label}: ${percent(totals.s, totals.f)} available; ${plural(failedPeriods, periodWord)} with failures`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function bars(
  buckets: HistoryBucket[],
  now: Date,
  count: number,
  span: number,
  label: (start: Date) => string,
): { bars: Bar[]; totals: { s: number; f: number }; failedPeriods: number } {
  const end = Math.floor(now.getTime() / span) * span; // start of the current period
  const first = end - (count - 1) * span;
  const s = new Array<number>(count).fill(0);
  const f = new Array<number>(count).fill(0);
  for (const b of buckets) {
    const i = Math.floor((b.hour.getTime() - first) / span);
    if (i < 0 || i >= count) continue;
    s[i]! += b.successes;
    f[i]! += b.failures;
  }
  const out: Bar[] = [];
  let failedPeriods = 0;
  const totals = { s: 0, f: 0 };
  for (let i = 0; i < count; i++) {
    out.push({ level: level(s[i]!, f[i]!), title: barTitle(label(new Date(first + i * span)), s[i]!, f[i]!) });
    if (f[i]! > 0) failedPeriods++;
    totals.s += s[i]!;
    totals.f += f[i]!;
  }
  return { bars: out, totals, failedPeriods };
}

const dayLabel = (d: Date) => `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
const hourLabel = (d: Date) => {
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const next = String((d.getUTCHours() + 1) % 24).padStart(2, '0');
  return `${dayLabel(d)}, ${hh}:00–${next}:00 UTC`;
};

const count = new Intl.NumberFormat('en-US');

/** "Budget: 1,620 of 2,000 calls this month (81 %) · at most 200 per user · most spent by alice (190 calls) · upstream reports 13,380 of 15,000 left · at most 1 call a second". */
export function limitsText(view: LimitsView | undefined): string {
  if (!view) return '';
  const parts: string[] = [];
  if (view.budget) {
    const { used, limit, period } = view.budget;
    const share = Math.floor((used / limit) * 100);
    const spent = used >= limit ? ', spent' : '';
    parts.push(`Budget: ${count.format(used)} of ${count.format(limit)} calls this ${period} (${share} %${spent})`);
    if (view.budget.perUser !== null) parts.push(`at most ${count.format(view.budget.perUser)} per user`);
    const top = view.budget.topUser;
    if (top) parts.push(`most spent by ${top.name} (${count.format(top.calls)} ${top.calls === 1 ? 'call' : 'calls'})`);
  }
  if (view.upstream) {
    const { remaining, limit } = view.upstream;
    parts.push(`upstream reports ${count.format(remaining)} of ${count.format(limit)} left`);
  }
  if (view.ratePerSecond !== null) {
    const r = view.ratePerSecond;
    parts.push(
      r >= 1
        ? `at most ${count.format(r)} calls a second`
        : `at most one call every ${count.format(Math.round(1 / r))} s`,
    );
  }
  if (view.concurrency !== null) parts.push(`at most ${view.concurrency} at once`);
  const text = parts.join(' · ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function buildStatusPage(input: {
  providers: ProviderDescriptor[];
  rows: Map<string, StatusRow>;
  history: HistoryBucket[];
  limits?: ReadonlyMap<string, LimitsView>;
  databaseUnavailable: boolean;
  now?: Date;
}): StatusPageView {
  const now = input.now ?? new Date();
  const health = healthOf(input.providers, input.rows);
  const byProvider = new Map<string, HistoryBucket[]>();
  for (const b of input.history) {
    const list = byProvider.get(b.provider) ?? [];
    list.push(b);
    byProvider.set(b.provider, list);
  }

  const views: ProviderView[] = input.providers.map((p, i) => {
    const h = health[i]!;
    const history = byProvider.get(p.slug) ?? [];
    const daily = bars(history, now, 30, DAY, dayLabel);
    const hourly = bars(history, now, 24, HOUR, hourLabel);
    return {
      slug: p.slug,
      name: p.name,
      state: h.state,
      stateLabel: STATE_LABEL[h.state],
      monitor: p.monitor,
      monitorLabel: MONITOR_LABEL[p.monitor],
      lastOk: moment(h.lastOkAt, now),
      checked: moment(h.checkedAt, now),
      lastError: h.lastError,
      limits: limitsText(input.limits?.get(p.slug)),
      daily: daily.bars,
      dailySummary: summaryOf('Last 30 days', daily.totals, daily.failedPeriods, 'day'),
      hourly: hourly.bars,
      hourlySummary: summaryOf('Last 24 hours', hourly.totals, hourly.failedPeriods, 'hour'),
    };
  });

  const counts = {
    total: views.length,
    up: views.filter((v) => v.state === 'up').length,
    down: views.filter((v) => v.state === 'down').length,
    unknown: views.filter((v) => v.state === 'unknown').length,
  };
  let summary: StatusPageView['summary'];
  if (counts.down > 0) {
    summary = {
      kind: 'issues',
      headline: `${plural(counts.down, 'provider')} down`,
      detail: `${counts.up} of ${counts.total} operational${counts.unknown ? `, ${counts.unknown} not checked yet` : ''}.`,
    };
  } else if (counts.up > 0) {
    summary = {
      kind: 'operational',
      headline: 'All systems operational',
      detail: `${counts.up} of ${counts.total} providers seen working${counts.unknown ? `, ${counts.unknown} not checked yet` : ''}.`,
    };
  } else {
    summary = {
      kind: 'pending',
      headline: 'Awaiting first checks',
      detail: 'No provider has been observed yet. States appear after the first searches or active checks.',
    };
  }

  const groups = GROUPS.map((g) => ({
    key: g.key,
    label: g.label,
    providers: views.filter((_, i) => input.providers[i]!.group === g.key),
  })).filter((g) => g.providers.length > 0);

  return { summary, counts, groups, databaseUnavailable: input.databaseUnavailable, generated: moment(now, now)! };
}
