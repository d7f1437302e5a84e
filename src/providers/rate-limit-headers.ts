import type { ReportedLimits } from './types.js';

/*
 * Reading the X-RateLimit-* headers upstreams report their limits in. Brave
 * sends one comma-separated entry per window, with the windows' lengths in
 * X-RateLimit-Policy (`1;w=1, 15000;w=2592000`); Pixabay one entry, for a
 * window its documentation fixes (60 s). Reset is in seconds from now.
 */

interface Window {
  limit: number;
  remaining: number;
  resetSeconds: number;
  windowSeconds: number;
}

const numbers = (text: string | undefined): number[] =>
  (text ?? '').split(',').map((part) => Number(part.trim().split(';')[0]));

/** The windows in the headers; `windows` gives their lengths when there is no X-RateLimit-Policy. */
export function rateLimitWindows(headers: Readonly<Record<string, string>>, windows: readonly number[]): Window[] {
  const limits = numbers(headers['x-ratelimit-limit']);
  const remaining = numbers(headers['x-ratelimit-remaining']);
  const resets = numbers(headers['x-ratelimit-reset']);
  const policy = headers['x-ratelimit-policy']
    ?.split(',')
    .map((part) => Number(/;\s*w=(\d+)/.exec(part)?.[1] ?? Number.NaN));
  const out: Window[] = [];
  for (let i = 0; i < limits.length; i++) {
    const window = policy?.[i] ?? windows[i];
    const entry = { limit: limits[i]!, remaining: remaining[i]!, resetSeconds: resets[i]!, windowSeconds: window! };
    if (!Object.values(entry).every((n) => Number.isFinite(n) && n >= 0) || entry.limit < 1 || entry.windowSeconds < 1)
      continue;
    out.push(entry);
  }
  return out;
}

/** Windows up to an hour pace calls; the longest window of a day or more is the upstream's budget. */
export function limitsOfWindows(windows: readonly Window[]): ReportedLimits | null {
  if (windows.length === 0) return null;
  const short = windows.filter((w) => w.windowSeconds <= 3600);
  // The strictest short window: the longest spacing it asks for.
  const rate = short.sort((a, b) => b.windowSeconds / b.limit - a.windowSeconds / a.limit)[0];
  const long = windows.filter((w) => w.windowSeconds >= 86_400).sort((a, b) => b.windowSeconds - a.windowSeconds)[0];
  const out: ReportedLimits = {};
  if (rate) out.rate = rate;
  if (long) out.period = { limit: long.limit, remaining: long.remaining, resetSeconds: long.resetSeconds };
  return out.rate || out.period ? out : null;
}
