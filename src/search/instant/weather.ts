import { weatherFlow, type WeatherReport } from '../../providers/openmeteo/forecast.js';
import { alternation, prefixMatcher, suffixMatcher } from './text.js';
import type { AnswerFields, InstantHandler } from './types.js';
import { WEATHER_VOCABULARY } from './vocabulary.js';

/*
 * `weather`: current conditions and seven days for a place, from Open-Meteo
 * (geocoding, then the forecast; in the `lang` language or English; cached
 * 1 h per place and language by the runner). Unknown place or a failing
 * upstream (recorded in health by the runner): no answer.
 * Fields: `location`, `country`, `emoji`, `code` (WMO), `temp_c`, `temp_f`,
 * `feels_c`, `feels_f`, `humidity` (%), `wind_kmh`, `wind_dir` (compass),
 * `is_day`, `daily` [{`weekday` (0 = Monday … 6 = Sunday), `code`, `emoji`,
 * `high_c`, `low_c`, `high_f`, `low_f`, `is_today`}]; temperatures rounded
 * to whole degrees. Beyond the reference: `description` (English WMO text).
 */

/** One deadline over both calls (each is also bounded by the provider's timeout). */
export const WEATHER_DEADLINE_MS = 10_000;

const V = Object.values(WEATHER_VOCABULARY);
const afterPrefix = prefixMatcher(V.flatMap((v) => v.prefixes));
const beforeSuffix = suffixMatcher(V.flatMap((v) => v.suffixes));
const TRAILING_TIME = new RegExp(
  `\\s+${alternation(['today', 'tomorrow', 'now', 'right now', 'tonight', 'this week', 'this weekend', 'forecast', 'weather'])}$`,
  'iu',
);
const NOT_A_PLACE = new Set([
  'celsius',
  'fahrenheit',
  'kelvin',
  'today',
  'tomorrow',
  'now',
  'tonight',
  'forecast',
  'weather',
  'report',
  'app',
  'map',
  'radar',
  'channel',
  'news',
  'near me',
  'here',
  'outside',
  'api',
]);

/** WMO weather interpretation codes: description and emoji (day). */
const WMO: Record<number, [string, string]> = {
  0: ['Clear sky', '☀️'],
  1: ['Mainly clear', '🌤️'],
  2: ['Partly cloudy', '⛅'],
  3: ['Overcast', '☁️'],
  45: ['Fog', '🌫️'],
  48: ['Depositing rime fog', '🌫️'],
  51: ['Light drizzle', '🌦️'],
  53: ['Drizzle', '🌦️'],
  55: ['Dense drizzle', '🌧️'],
  56: ['Light freezing drizzle', '🌧️'],
  57: ['Freezing drizzle', '🌧️'],
  61: ['Slight rain', '🌦️'],
  63: ['Rain', '🌧️'],
  65: ['Heavy rain', '🌧️'],
  66: ['Light freezing rain', '🌧️'],
  67: ['Freezing rain', '🌧️'],
  71: ['Slight snow', '🌨️'],
  73: ['Snow', '🌨️'],
  75: ['Heavy snow', '❄️'],
  77: ['Snow grains', '🌨️'],
  80: ['Slight rain showers', '🌦️'],
  81: ['Rain showers', '🌧️'],
  82: ['Violent rain showers', '⛈️'],
  85: ['Slight snow showers', '🌨️'],
  86: ['Heavy snow showers', '❄️'],
  95: ['Thunderstorm', '⛈️'],
  96: ['Thunderstorm with slight hail', '⛈️'],
  99: ['Thunderstorm with heavy hail', '⛈️'],
};

export function weatherEmoji(code: number | null, isDay = true): string {
  if (code === null) return '🌡️';
  if (!isDay && (code === 0 || code === 1)) return '🌙';
  return WMO[code]?.[1] ?? '🌡️';
}

export function weatherDescription(code: number | null): string {
  return code === null ? '' : (WMO[code]?.[0] ?? '');
}

const round = (x: number | null) => (x === null ? null : Math.round(x));
const toF = (c: number | null) => (c === null ? null : Math.round((c * 9) / 5 + 32));
const COMPASS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];

export function compass(degrees: number | null): string {
  if (degrees === null) return '';
  return COMPASS[Math.round((((degrees % 360) + 360) % 360) / 45) % 8]!;
}

/** 0 = Monday … 6 = Sunday, of a `YYYY-MM-DD` date. */
export function weekdayOf(date: string): number | null {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (!Number.isFinite(ms)) return null;
  return (new Date(ms).getUTCDay() + 6) % 7;
}

export function describeWeather(report: WeatherReport): AnswerFields {
  const { place, forecast } = report;
  const c = forecast.current;
  const today = c.time.slice(0, 10);
  return {
    location: place.name,
    country: place.country,
    emoji: weatherEmoji(c.code, c.isDay),
    code: c.code,
    description: weatherDescription(c.code),
    temp_c: round(c.temperature),
    temp_f: toF(c.temperature),
    feels_c: round(c.apparent),
    feels_f: toF(c.apparent),
    humidity: round(c.humidity),
    wind_kmh: round(c.windSpeed),
    wind_dir: compass(c.windDirection),
    is_day: c.isDay,
    daily: forecast.daily.map((d) => ({
      weekday: weekdayOf(d.date),
      code: d.code,
      emoji: weatherEmoji(d.code),
      high_c: round(d.max),
      low_c: round(d.min),
      high_f: toF(d.max),
      low_f: toF(d.min),
      is_today: d.date === today,
    })),
  };
}

/** The place named by a weather query, or null. */
export function weatherPlace(q: string): string | null {
  let place = afterPrefix(q) ?? beforeSuffix(q);
  if (place === null) return null;
  for (let i = 0; i < 3; i++) place = place.replace(TRAILING_TIME, '');
  place = place
    .replace(/^(?:in|for|at|the)\s+/i, '')
    .replace(/[?!.,\s]+$/, '')
    .trim();
  if (place.length < 2 || place.length > 80 || !/\p{L}/u.test(place)) return null;
  if (NOT_A_PLACE.has(place.toLowerCase())) return null;
  return place;
}

export const weatherHandler: InstantHandler = {
  type: 'weather',
  async answer(ctx) {
    const place = weatherPlace(ctx.q);
    if (place === null) return null;
    const [outcome] = await ctx.deps.upstream.gather([weatherFlow(place, ctx.lang || 'en', ctx.deps.config)], {
      deadlineMs: WEATHER_DEADLINE_MS,
    });
    return !outcome?.ok || outcome.value === null ? null : describeWeather(outcome.value);
  },
};
