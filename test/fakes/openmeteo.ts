import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Open-Meteo: geocoding (/v1/search) and forecast (/v1/forecast) on one
 * server, so OPENMETEO_BASE_URL and OPENMETEO_GEOCODING_URL can both point
 * at it. No geocoding match → the `results` key is absent, like the real API.
 */

export const CITIES = [
  {
    id: 2988507,
    name: 'Paris',
    latitude: 48.85341,
    longitude: 2.3488,
    elevation: 42.0,
    feature_code: 'PPLC',
    country_code: 'FR',
    country: 'France',
    admin1: 'Île-de-France',
    timezone: 'Europe/Paris',
    population: 2138551,
  },
  {
    id: 2950159,
    name: 'Berlin',
    latitude: 52.52437,
    longitude: 13.41053,
    elevation: 74.0,
    feature_code: 'PPLC',
    country_code: 'DE',
    country: 'Germany',
    admin1: 'Land Berlin',
    timezone: 'Europe/Berlin',
    population: 3426354,
  },
];

export async function startOpenMeteoFake(options: FakeServerOptions = {}): Promise<FakeServer> {
  return startFakeServer(
    {
      'GET /v1/search': (req) => {
        const name = (req.query.get('name') ?? '').toLowerCase();
        const count = Number(req.query.get('count') ?? 10);
        const hits =
          name.length >= 2 ? CITIES.filter((c) => c.name.toLowerCase().startsWith(name)).slice(0, count) : [];
        return { body: hits.length ? { results: hits, generationtime_ms: 0.9 } : { generationtime_ms: 0.4 } };
      },
      'GET /v1/forecast': (req) => {
        const lat = Number(req.query.get('latitude'));
        const lon = Number(req.query.get('longitude'));
        if (!Number.isFinite(lat) || !Number.isFinite(lon)) {
          return { status: 400, body: { error: true, reason: 'Parameter latitude and longitude must be set' } };
        }
        const days = ['2025-11-21', '2025-11-22', '2025-11-23', '2025-11-24', '2025-11-25', '2025-11-26', '2025-11-27'];
        return {
          body: {
            latitude: lat,
            longitude: lon,
            generationtime_ms: 0.08,
            utc_offset_seconds: 3600,
            timezone: 'Europe/Paris',
            timezone_abbreviation: 'GMT+1',
            elevation: 42.0,
            current_units: { time: 'iso8601', interval: 'seconds', temperature_2m: '°C', weather_code: 'wmo code' },
            current: {
              time: '2025-11-21T11:00',
              interval: 900,
              temperature_2m: 6.4,
              apparent_temperature: 3.9,
              relative_humidity_2m: 81,
              weather_code: 3,
              wind_speed_10m: 12.3,
              wind_direction_10m: 230,
              is_day: 1,
            },
            daily_units: {
              time: 'iso8601',
              weather_code: 'wmo code',
              temperature_2m_max: '°C',
              temperature_2m_min: '°C',
            },
            daily: {
              time: days,
              weather_code: [3, 61, 2, 0, 45, 80, 3],
              temperature_2m_max: [8.1, 7.4, 9.0, 10.2, 6.5, 7.7, 8.8],
              temperature_2m_min: [2.0, 3.3, 1.1, 0.5, 2.2, 3.0, 1.9],
            },
          },
        };
      },
    },
    options,
  );
}
