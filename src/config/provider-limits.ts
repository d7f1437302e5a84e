import { parseRate, type Rate } from './rate.js';

/*
 * PROVIDER_LIMITS: the operator's pacing and budgets, one entry per provider,
 * entries separated by `;` (or new lines), each a slug and its settings:
 *
 *   PROVIDER_LIMITS="provider_01 rate=1/s month=2000; provider_12 day=300; provider_13 rate=off"
 *
 * rate=<n>/<period> (s, m, h or d), concurrency=<n>, month=<n>, day=<n>,
 * user_share=<n>% (what one user's searches may spend of the budget); `off`
 * lifts the provider's default for that setting. A setting left out keeps
 * the default of the provider's published terms (docs/configuration.md), and
 * a budget's user share is DEFAULT_USER_SHARE_PERCENT.
 */

/** Of a provider's budget, what one user's searches may spend by default (%): no single key empties it. */
export const DEFAULT_USER_SHARE_PERCENT = 10;

export interface ProviderLimitsSetting {
  /** undefined: the default; null: none. */
  rate?: Rate | null;
  concurrency?: number | null;
  /** Calls per calendar month (UTC). */
  month?: number | null;
  /** Calls per calendar day (UTC). */
  day?: number | null;
  /** Percent of the budget one user may spend (1-100); undefined: the default; null: no share (one pool). */
  userShare?: number | null;
}

const SLUG = /^(provider_\d{2}|weather|currency|translate)$/;
const KEYS = ['rate', 'concurrency', 'month', 'day', 'user_share'] as const;
type Key = (typeof KEYS)[number];
const FIELD = {
  rate: 'rate',
  concurrency: 'concurrency',
  month: 'month',
  day: 'day',
  user_share: 'userShare',
} as const;

/** The parsed variable, or an error message naming the entry at fault. */
export function parseProviderLimits(text: string): Record<string, ProviderLimitsSetting> | string {
  const out: Record<string, ProviderLimitsSetting> = {};
  for (const raw of text.split(/[;\n]/)) {
    const entry = raw.trim();
    if (entry === '') continue;
    const [slug = '', ...settings] = entry.split(/[\s,]+/).filter(Boolean);
    if (!SLUG.test(slug)) return `"${slug}" is not a provider slug (entry "${entry}")`;
    if (out[slug]) return `${slug} is listed twice`;
    if (settings.length === 0) return `${slug} has no settings (e.g. "${slug} rate=1/s")`;
    const setting: ProviderLimitsSetting = {};
    for (const pair of settings) {
      const eq = pair.indexOf('=');
      const key = pair.slice(0, eq) as Key;
      const value = pair.slice(eq + 1).trim();
      if (eq < 1 || !KEYS.includes(key))
        return `${slug}: "${pair}" is not one of ${KEYS.map((k) => `${k}=`).join(', ')}`;
      const field = FIELD[key];
      if (field in setting) return `${slug}: ${key} is set twice`;
      if (value.toLowerCase() === 'off') {
        setting[field] = null;
      } else if (key === 'user_share') {
        const percent = /^\d+%$/.test(value) ? Number(value.slice(0, -1)) : Number.NaN;
        if (!(percent >= 1 && percent <= 100))
          return `${slug}: user_share must be a percentage from 1% to 100% or off (got "${value}")`;
        setting.userShare = percent;
      } else if (key === 'rate') {
        const rate = parseRate(value);
        if (typeof rate === 'string') return `${slug}: rate ${rate}`;
        setting.rate = rate;
      } else {
        const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
        if (!Number.isSafeInteger(n) || n < 1)
          return `${slug}: ${key} must be a positive integer or off (got "${value}")`;
        setting[field as 'concurrency' | 'month' | 'day'] = n;
      }
    }
    if (setting.month !== undefined && setting.day !== undefined && setting.month !== null && setting.day !== null) {
      return `${slug}: set month or day, not both`;
    }
    out[slug] = setting;
  }
  return out;
}
