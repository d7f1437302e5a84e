import { describe, expect, it } from 'vitest';
import { formatPublished, formatUnixDay, isoUtc, unixIso } from '../../src/providers/dates.js';

describe('upstream dates', () => {
  it('writes a date or date-time as its calendar day in English', () => {
    expect(formatPublished('2024-03-03')).toBe('March 03, 2024');
    expect(formatPublished('2024-12-31T23:59:59.123-05:00')).toBe('December 31, 2024');
  });

  it('refuses what is not a real day or time of day', () => {
    for (const bad of ['2024-02-30', '2024-13-01', '2024-03-03T24:00:00', '2024-03-03T10:60', '0050-01-01', 'soon'])
      expect([bad, formatPublished(bad), isoUtc(bad)]).toEqual([bad, '', '']);
  });

  it('writes machine dates as ISO 8601 UTC, a missing zone read as UTC', () => {
    expect(isoUtc('2024-03-03')).toBe('2024-03-03T00:00:00Z');
    expect(isoUtc('2024-03-03T10:12:00')).toBe('2024-03-03T10:12:00Z');
    expect(isoUtc('2024-03-03T10:12')).toBe('2024-03-03T10:12:00Z');
    expect(isoUtc('2024-03-03 10:12:00.5+05:30')).toBe('2024-03-03T04:42:00Z');
    expect(isoUtc('2024-12-31T22:00:00-0300')).toBe('2025-01-01T01:00:00Z');
    expect(isoUtc('2024-03-03T10:12:00+02')).toBe('2024-03-03T08:12:00Z');
    expect(isoUtc('2024-03-03T10:12:00+24:00')).toBe('');
  });

  it('reads Unix seconds, as a number or digits, within sane years', () => {
    expect(unixIso(1700000000)).toBe('2023-11-14T22:13:20Z');
    expect(unixIso('1700000000')).toBe('2023-11-14T22:13:20Z');
    expect(formatUnixDay(1700000000.9)).toBe('November 14, 2023');
    expect(formatUnixDay(1704067200)).toBe('January 01, 2024');
    for (const bad of [99_999_999, 1e11 + 1, 'x', null, Number.NaN])
      expect([unixIso(bad), formatUnixDay(bad)]).toEqual(['', '']);
  });
});
