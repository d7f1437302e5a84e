import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { body, list, nested, text } from '../tolerant.js';
import type { ProviderCall, ProviderFlow } from '../types.js';
import { OPEN_METEO } from './slug.js';

/*
 * Open-Meteo (slug `weather`), the weather instant answer, in two steps:
 * 1. GET {OPENMETEO_GEOCODING_URL}/v1/search?name=&count=1&language=&format=json
 *    → results[0] (name, country, latitude, longitude, timezone); no match →
 *    the `results` key is absent, and the flow's value is null ("no such place").
 * 2. GET {OPENMETEO_BASE_URL}/v1/forecast?latitude=&longitude=&current=…&daily=…
 *    &timezone=auto&forecast_days=7 → current conditions and 7 daily rows
 *    (times local to the place, no offset).
 * The flow is keyed per place name and language, so the runner caches the
 * whole answer (including "no such place") for the descriptor's TTL (1 h).
 *
 * Sources: Open-Meteo documentation (Forecast API and Geocoding API pages).
 */

export const CURRENT_VARIABLES = [
  'temperature_2m',
  'apparent_temperature',
  'relative_humidity_2m',
  'weather_code',
  'wind_speed_10m',
  'wind_direction_10m',
  'is_day',
] as const;
export const DAILY_VARIABLES = ['weather_code', 'temperature_2m_max', 'temperature_2m_min'] as const;

/** A finite number, else null (missing, null, or a string). */
const num = z
  .unknown()
  .optional()
  .transform((v): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null));
const numList = z
  .unknown()
  .optional()
  .transform((v): (number | null)[] =>
    Array.isArray(v) ? v.map((x) => (typeof x === 'number' && Number.isFinite(x) ? x : null)) : [],
  );

export interface GeoPlace {
  name: string;
  country: string;
  countryCode: string;
  admin1: string;
  latitude: number;
  longitude: number;
  timezone: string;
}

export interface CurrentWeather {
  /** Local time of the observation, `YYYY-MM-DDTHH:MM`. */
  time: string;
  temperature: number;
  apparent: number | null;
  humidity: number | null;
  code: number | null;
  windSpeed: number | null;
  windDirection: number | null;
  isDay: boolean;
}

export interface DailyWeather {
  /** Local date, `YYYY-MM-DD`. */
  date: string;
  code: number | null;
  max: number | null;
  min: number | null;
}

export interface Forecast {
  timezone: string;
  current: CurrentWeather;
  daily: DailyWeather[];
}

export interface WeatherReport {
  place: GeoPlace;
  forecast: Forecast;
}

export type OpenMeteoConfig = Pick<Config, 'OPENMETEO_BASE_URL' | 'OPENMETEO_GEOCODING_URL'>;

const geoSchema = body({
  results: list(
    z.object({
      name: text,
      country: text,
      country_code: text,
      admin1: text,
      latitude: num,
      longitude: num,
      timezone: text,
    }),
  ),
});

export function parseGeocoding(json: unknown): GeoPlace | null {
  const data = geoSchema.parse(json);
  for (const r of data.results) {
    if (r.latitude === null || r.longitude === null || !r.name) continue;
    return {
      name: r.name,
      country: r.country,
      countryCode: r.country_code,
      admin1: r.admin1,
      latitude: r.latitude,
      longitude: r.longitude,
      timezone: r.timezone,
    };
  }
  return null;
}

export function geocodeCall(name: string, lang: string, config: OpenMeteoConfig): ProviderCall<GeoPlace | null> {
  const params = new URLSearchParams({ name, count: '1', language: lang || 'en', format: 'json' });
  return {
    provider: OPEN_METEO,
    request: { method: 'GET', url: `${config.OPENMETEO_GEOCODING_URL}/v1/search?${params}` },
    parse: parseGeocoding,
  };
}

const forecastSchema = body({
  timezone: text,
  current: z.object({
    time: text,
    temperature_2m: z.number(),
    apparent_temperature: num,
    relative_humidity_2m: num,
    weather_code: num,
    wind_speed_10m: num,
    wind_direction_10m: num,
    is_day: num,
  }),
  daily: nested({
    time: list(z.string()),
    weather_code: numList,
    temperature_2m_max: numList,
    temperature_2m_min: numList,
  }),
});

/** Throws when there are no current conditions (that is a bad response, not "no weather"). */
export function parseForecast(json: unknown): Forecast {
  const data = forecastSchema.parse(json);
  const c = data.current;
  const d = data.daily;
  return {
    timezone: data.timezone,
    current: {
      time: c.time,
      temperature: c.temperature_2m,
      apparent: c.apparent_temperature,
      humidity: c.relative_humidity_2m,
      code: c.weather_code,
      windSpeed: c.wind_speed_10m,
      windDirection: c.wind_direction_10m,
      isDay: c.is_day !== 0,
    },
    daily: d.time.map((date, i) => ({
      date,
      code: d.weather_code[i] ?? null,
      max: d.temperature_2m_max[i] ?? null,
      min: d.temperature_2m_min[i] ?? null,
    })),
  };
}

export function forecastCall(
  place: Pick<GeoPlace, 'latitude' | 'longitude'>,
  config: OpenMeteoConfig,
): ProviderCall<Forecast> {
  const params = new URLSearchParams({
    latitude: String(place.latitude),
    longitude: String(place.longitude),
    current: CURRENT_VARIABLES.join(','),
    daily: DAILY_VARIABLES.join(','),
    timezone: 'auto',
    forecast_days: '7',
  });
  return {
    provider: OPEN_METEO,
    request: { method: 'GET', url: `${config.OPENMETEO_BASE_URL}/v1/forecast?${params}` },
    parse: parseForecast,
  };
}

/** Geocode, then forecast: null when the place is unknown. Cached per place name (case-insensitive) and language. */
export function weatherFlow(name: string, lang: string, config: OpenMeteoConfig): ProviderFlow<WeatherReport | null> {
  const language = lang || 'en';
  return {
    provider: OPEN_METEO,
    key: `forecast ${language} ${name.toLowerCase()}`,
    async run(steps) {
      const place = await steps.call(geocodeCall(name, language, config));
      if (!place) return null;
      const forecast = await steps.call(forecastCall(place, config));
      return { place, forecast };
    },
  };
}
