import type { DateFilter } from '../contracts/search.js';

/*
 * The `date` filter as a time window, for upstreams that filter by an
 * absolute "published after" instant instead of a freshness code (World News
 * `earliest-publish-date`, Sepia `startDate`). Same windows as the original:
 * a day, a week, 30 days, 365 days.
 */

const DAY_MS = 24 * 60 * 60_000;

export const FRESHNESS_WINDOW_MS: Readonly<Record<Exclude<DateFilter, ''>, number>> = {
  d: DAY_MS,
  w: 7 * DAY_MS,
  m: 30 * DAY_MS,
  y: 365 * DAY_MS,
};

/** The earliest instant a `date` filter admits, or null without a filter. */
export function earliestFor(date: DateFilter, now: Date): Date | null {
  if (!date) return null;
  return new Date(now.getTime() - FRESHNESS_WINDOW_MS[date]);
}

/** The languages the original forwards to the upstreams that take a language filter (the same seven as Brave's countries). */
export const MEDIA_LANGUAGES: ReadonlySet<string> = new Set(['en', 'fr', 'de', 'es', 'it', 'pt', 'nl']);
