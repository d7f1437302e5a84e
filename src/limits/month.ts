/** Calendar helpers for monthly usage, always in UTC. */

/** First day of the UTC month of `at`, as `YYYY-MM-01`. */
export function monthStart(at: Date): string {
  return `${monthLabel(at)}-01`;
}

/** The UTC month of `at`, as `YYYY-MM`. */
export function monthLabel(at: Date): string {
  return `${at.getUTCFullYear().toString().padStart(4, '0')}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The instant the next UTC month begins. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}
