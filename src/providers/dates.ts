/*
 * Dates as Sift writes them from an upstream's date: a result's `age` as "Month DD, YYYY", the
 * calendar date of the value in English (the original service's form for PeerTube's dates, kept
 * for every upstream that sends a date), and `published` as ISO 8601 UTC. Every result of a search
 * passes here, so a date is read once, by one expression, and written from its parts.
 */

/**
 * English month names, from Intl (no table of our own), read once on first use: the process's
 * first Intl.DateTimeFormat sets up ICU's date formatting, which a start need not wait for, and
 * formatting a date through Intl for every result costs more than the rest of its date.
 */
let months: readonly string[] | undefined;
function monthNames(): readonly string[] {
  if (!months) {
    const format = new Intl.DateTimeFormat('en-US', { month: 'long', timeZone: 'UTC' });
    months = Array.from({ length: 12 }, (_, i) => format.format(Date.UTC(2001, i, 1)));
  }
  return months;
}

/** Year, month, day, then hour, minute, second and zone when a time is given (a fraction is dropped). */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

interface DateParts {
  year: string;
  month: string;
  day: string;
  /** "hh:mm:ss", or undefined for a plain date. */
  time: string | undefined;
  /** Minutes east of UTC (0 for `Z` or no zone: taken as UTC); NaN for an offset past ±23:59. */
  offsetMinutes: number;
}

/** The parts of an ISO-8601 date(-time), checked (a real calendar day, a time of day); null otherwise. */
function isoParts(raw: string): DateParts | null {
  const m = ISO_DATE_TIME.exec(raw.trim());
  if (!m) return null;
  const [, year, month, day, hour, minute, second = '00', zone] = m as unknown as string[];
  const [y, mo, d] = [Number(year), Number(month), Number(day)];
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59)) return null;
  let offsetMinutes = 0;
  if (zone !== undefined && zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const [h, min] = [Number(digits.slice(0, 2)), Number(digits.slice(2) || '0')];
    offsetMinutes = h > 23 || min > 59 ? Number.NaN : (zone[0] === '-' ? -1 : 1) * (h * 60 + min);
  }
  return {
    year: year!,
    month: month!,
    day: day!,
    time: hour === undefined ? undefined : `${hour}:${minute}:${second}`,
    offsetMinutes,
  };
}

/** An ISO-8601 date(-time) as "Month DD, YYYY" (the calendar date written in it); "" when unparsable. */
export function formatPublished(iso: string): string {
  const parts = isoParts(iso);
  return parts ? `${monthNames()[Number(parts.month) - 1]} ${parts.day}, ${parts.year}` : '';
}

/** A Unix time in seconds (a number, or digits) as "Month DD, YYYY" in UTC; "" when it is not one. */
export function formatUnixDay(value: unknown): string {
  const date = unixDate(value);
  if (!date) return '';
  const day = date.getUTCDate();
  return `${monthNames()[date.getUTCMonth()]} ${day < 10 ? '0' : ''}${day}, ${date.getUTCFullYear()}`;
}

/**
 * An upstream's machine date as ISO 8601 UTC ("2024-03-03T10:12:00Z"), the form `published`
 * carries: a date-time with or without a zone (Brave's `page_age` has none: taken as UTC), or a
 * plain date (midnight UTC); "" when unparsable.
 */
export function isoUtc(raw: string): string {
  const parts = isoParts(raw);
  if (!parts || Number.isNaN(parts.offsetMinutes)) return '';
  const local = `${parts.year}-${parts.month}-${parts.day}T${parts.time ?? '00:00:00'}`;
  if (parts.offsetMinutes === 0) return `${local}Z`;
  const ms = Date.parse(`${local}Z`) - parts.offsetMinutes * 60_000;
  return withoutMilliseconds(new Date(ms));
}

/** A Unix time in seconds (a number, or digits) as ISO 8601 UTC; "" when it is not one. */
export function unixIso(value: unknown): string {
  const date = unixDate(value);
  return date ? withoutMilliseconds(date) : '';
}

/** A Unix time in seconds, whole seconds, between 1973 and 5138; null when the value is not one. */
function unixDate(value: unknown): Date | null {
  const seconds =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{9,11}$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds) || seconds < 1e8 || seconds > 1e11) return null;
  return new Date(Math.trunc(seconds) * 1000);
}

/** "2024-03-03T10:12:00Z": toISOString without its milliseconds (a date of whole seconds). */
function withoutMilliseconds(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, iso.length - 5)}Z`;
}
