import { COUNTRY_ZONES } from './country-zones.js';
import { regionNames } from './intl-names.js';
import { prefixMatcher, suffixMatcher, titleCase } from './text.js';
import type { InstantHandler } from './types.js';
import { WORLDCLOCK_VOCABULARY } from './vocabulary.js';

/*
 * `worldclock`: the current time of a city, country or zone, computed with
 * Intl. Places come from the vocabulary (cities, zone names people type,
 * other names of countries), from Intl's names of the countries in
 * country-zones.ts and, for the explicit "time in …" forms only, from the
 * city part of every IANA zone Intl knows ("time in eucla"). "<place> time"
 * uses the first two only, so "screen time" or "christmas time" are no answer.
 * Fields: `place`, `tz` (IANA), `tz_abbr`, `time` (24 h `HH:MM`),
 * `time_ampm` (`h:MM AM`), `date` (`Friday, 21 November 2025`), `offset` (`UTC±HH:MM`).
 */

const W = Object.values(WORLDCLOCK_VOCABULARY);
const afterPrefix = prefixMatcher(W.flatMap((v) => v.prefixes));
const beforeSuffix = suffixMatcher(W.flatMap((v) => v.suffixes));

/** A zone Intl accepts (older ICU builds only know some zones by their previous name). */
const ALIASES: Record<string, string> = { 'Europe/Kyiv': 'Europe/Kiev', 'Asia/Yangon': 'Asia/Rangoon' };
function usableZone(zone: string): string | null {
  for (const z of [zone, ALIASES[zone]]) {
    if (!z) continue;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: z });
      return z;
    } catch {
      /* not known to this ICU */
    }
  }
  return null;
}

interface ZoneTables {
  /** Vocabulary place → zone. */
  places: Map<string, string>;
  /** Lowercased IANA id → id. */
  ids: Map<string, string>;
  /** Lowercased city part of an IANA id → id. */
  cities: Map<string, string>;
}

function buildZoneTables(): ZoneTables {
  const places = new Map<string, string>();
  const countries = regionNames(Object.keys(WORLDCLOCK_VOCABULARY), Object.keys(COUNTRY_ZONES));
  const named: [name: string, zone: string][] = [
    ...W.flatMap((v) => Object.entries(v.places)),
    ...[...countries].map(([name, cc]): [string, string] => [name, COUNTRY_ZONES[cc]!]),
  ];
  for (const [name, zone] of named) {
    const z = usableZone(zone);
    if (z && !places.has(name)) places.set(name, z);
  }
  const ids = new Map<string, string>();
  const cities = new Map<string, string>();
  for (const zone of [...Intl.supportedValuesOf('timeZone'), 'UTC']) {
    ids.set(zone.toLowerCase(), zone);
    const city = zone.split('/').pop()!.replace(/_/g, ' ').toLowerCase();
    if (zone.includes('/') && !zone.startsWith('Etc/') && !cities.has(city)) cities.set(city, zone);
  }
  return { places, ids, cities };
}

/*
 * Built on first use, not with the module: trying every vocabulary zone with Intl (and Intl's
 * first date formatter, which sets up ICU) costs some 80 ms that a start need not wait for.
 * prepareZoneTables() builds them once the server listens (app.ts).
 */
let zoneTables: ZoneTables | undefined;

export function prepareZoneTables(): ZoneTables {
  zoneTables ??= buildZoneTables();
  return zoneTables;
}

const clean = (place: string) =>
  place
    .toLowerCase()
    .replace(/^the\s+/, '')
    .replace(/[?!.,\s]+$/, '')
    .replace(/\s+(?:right\s+)?now$/, '')
    .trim();

/** The zone of a place, or null. `explicit`: the query said "time in …", so every zone city counts. */
export function zoneOf(place: string, explicit: boolean): string | null {
  const p = clean(place);
  const tables = prepareZoneTables();
  const known = tables.places.get(p);
  if (known) return known;
  // "tokyo, japan": the city decides
  const comma = p.indexOf(',');
  if (comma > 0) return zoneOf(p.slice(0, comma), explicit) ?? zoneOf(p.slice(comma + 1), explicit);
  if (!explicit) return null;
  return tables.ids.get(p) ?? tables.cities.get(p) ?? null;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(locale: string, options: Intl.DateTimeFormatOptions & { timeZone: string }): Intl.DateTimeFormat {
  const key = `${locale}|${JSON.stringify(options)}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, options);
    if (formatters.size > 2000) formatters.clear();
    formatters.set(key, f);
  }
  return f;
}

function part(parts: Intl.DateTimeFormatPart[], type: Intl.DateTimeFormatPartTypes): string {
  return parts.find((p) => p.type === type)?.value ?? '';
}

const ABBR_LOCALES = ['en-US', 'en-GB', 'en-IN', 'en-AU', 'en-ZA', 'ja-JP'];

/** A letter abbreviation (EST, CET, JST, IST…) when some locale has one, else Intl's `GMT+9` form. */
export function zoneAbbreviation(zone: string, at: Date): string {
  let fallback = '';
  for (const locale of ABBR_LOCALES) {
    const name = part(formatter(locale, { timeZone: zone, timeZoneName: 'short' }).formatToParts(at), 'timeZoneName');
    if (/^[A-Z]{2,5}$/.test(name)) return name;
    if (!fallback) fallback = name;
  }
  return fallback;
}

/** `UTC±HH:MM` of the zone at that instant. */
export function zoneOffset(zone: string, at: Date): string {
  const name = part(
    formatter('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(at),
    'timeZoneName',
  );
  const m = /^GMT([+-]\d{2}:\d{2})$/.exec(name);
  return m ? `UTC${m[1]}` : 'UTC+00:00';
}

export function clockAt(
  zone: string,
  at: Date,
): { time: string; time_ampm: string; date: string; offset: string; tz_abbr: string } {
  const p = formatter('en-US', {
    timeZone: zone,
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const hour = Number(part(p, 'hour')) % 24;
  const minute = part(p, 'minute').padStart(2, '0');
  const h12 = hour % 12 === 0 ? 12 : hour % 12;
  return {
    time: `${String(hour).padStart(2, '0')}:${minute}`,
    time_ampm: `${h12}:${minute} ${hour < 12 ? 'AM' : 'PM'}`,
    date: `${part(p, 'weekday')}, ${part(p, 'day')} ${part(p, 'month')} ${part(p, 'year')}`,
    offset: zoneOffset(zone, at),
    tz_abbr: zoneAbbreviation(zone, at),
  };
}

/** How a place is shown: as typed, in title case; short all-letter names (UK, NYC, PST) in capitals. */
function displayPlace(typed: string): string {
  const t = typed
    .trim()
    .replace(/^the\s+/i, '')
    .replace(/[?!.,\s]+$/, '')
    .replace(/\s+(?:right\s+)?now$/i, '');
  if (t.includes('/')) return titleCase(t.split('/').pop()!.replace(/_/g, ' ').toLowerCase());
  if (
    /^[a-z]{2,4}$/i.test(t) &&
    !/^(?:rome|oslo|lima|doha|riga|baku|bern|kyiv|kiev|peru|iran|iraq|oman|cuba|mali|chad|fiji|togo|laos|guam)$/i.test(
      t,
    )
  ) {
    return t.toUpperCase();
  }
  return t === t.toLowerCase() ? titleCase(t) : t;
}

export const worldclockHandler: InstantHandler = {
  type: 'worldclock',
  async answer(ctx) {
    let typed = afterPrefix(ctx.q);
    let explicit = true;
    if (typed === null) {
      typed = beforeSuffix(ctx.q);
      explicit = false;
    }
    if (typed === null) return null;
    const tz = zoneOf(typed, explicit);
    if (!tz) return null;
    return { place: displayPlace(typed), tz, ...clockAt(tz, ctx.now) };
  },
};
