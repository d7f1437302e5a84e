/** A request rate such as `60/min`, parsed the way Django REST Framework does. */
export interface Rate {
  limit: number;
  windowSeconds: number;
  /** The text as configured, for messages and headers. */
  text: string;
}

const PERIOD_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * Parses `<n>/<period>` where only the first letter of the period counts
 * (s, m, h, d). Returns an error message instead of throwing.
 */
export function parseRate(text: string): Rate | string {
  const match = /^\s*(\d+)\s*\/\s*([A-Za-z]+)\s*$/.exec(text);
  if (!match) return `must look like <n>/<period>, e.g. 60/min (got "${text}")`;
  const limit = Number(match[1]);
  const period = PERIOD_SECONDS[(match[2] ?? '').charAt(0).toLowerCase()];
  if (period === undefined) return `period must start with s, m, h or d (got "${match[2]}")`;
  if (!Number.isSafeInteger(limit) || limit < 1) return `the count must be a positive integer (got "${match[1]}")`;
  return { limit, windowSeconds: period, text: text.trim() };
}
