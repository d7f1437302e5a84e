/*
 * Dates as Sift writes a result's `age` when the upstream gives a date rather
 * than a text: "Month DD, YYYY", the calendar date of the value, in English
 * (the original service's form for PeerTube's dates, kept for every upstream
 * that sends a date).
 */

/**
 * English month names, from Intl (no table of our own). Made on first use: the process's first
 * Intl.DateTimeFormat sets up ICU's date formatting, some 60 ms that a start need not wait for.
 */
let monthFormat: Intl.DateTimeFormat | undefined;
const monthName = (date: Date) =>
  (monthFormat ??= new Intl.DateTimeFormat('en-US', { month: 'long', timeZone: 'UTC' })).format(date);

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** An ISO-8601 date(-time) as "Month DD, YYYY" (the calendar date written in it); "" when unparsable. */
export function formatPublished(iso: string): string {
  const m = ISO_DATE_TIME.exec(iso.trim());
  if (!m) return '';
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return '';
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return '';
  return `${monthName(check)} ${String(day).padStart(2, '0')}, ${m[1]}`;
}

/** A Unix time in seconds (a number, or digits) as "Month DD, YYYY" in UTC; "" when it is not one. */
export function formatUnixDay(value: unknown): string {
  const seconds =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{9,11}$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds < 1e8 || seconds > 1e11) return '';
  return formatPublished(new Date(Math.trunc(seconds) * 1000).toISOString().slice(0, 10));
}

/**
 * An upstream's machine date as ISO 8601 UTC ("2024-03-03T10:12:00Z"), the form `published`
 * carries: a date-time with or without a zone (Brave's `page_age` has none: taken as UTC), or a
 * plain date (midnight UTC); "" when unparsable.
 */
export function isoUtc(raw: string): string {
  const text = raw.trim();
  if (formatPublished(text) === '') return '';
  const m = ZONED.exec(text);
  if (!m) return '';
  const [, date, time = '00:00:00', zone = 'Z'] = m;
  const offset =
    zone === 'Z' || zone === 'z'
      ? 'Z'
      : zone.length === 3
        ? `${zone}:00`
        : zone.replace(/^([+-]\d{2}):?(\d{2})$/, '$1:$2');
  const ms = Date.parse(`${date}T${time.length === 5 ? `${time}:00` : time}${offset}`);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : '';
}

/** The parts isoUtc reads: date, time (seconds optional, a fraction dropped), zone. */
const ZONED = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,]\d{1,9})?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** A Unix time in seconds (a number, or digits) as ISO 8601 UTC; "" when it is not one. */
export function unixIso(value: unknown): string {
  const seconds =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{9,11}$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds < 1e8 || seconds > 1e11) return '';
  return new Date(Math.trunc(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
