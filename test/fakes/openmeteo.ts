import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Open-Meteo: geocoding (/v1/search) and forecast (/v1/forecast) on one
 * server, so OPENMETEO_BASE_URL and OPENMETEO_GEOCODING_URL can both point
 * at it. No geocoding match → the `results` key is absent, like the real API.
 * Geocoding answers in `language` when the city has a name in it; the
 * forecast returns only the `current` and `daily` variables asked for (as
 * the real API does), with temperatures derived from the latitude so that
 * places differ. Fault modes: `setMode(…, '/v1/search')` or `'/v1/forecast'`.
 */

/** Localised names of the cities (by language code), as the real geocoder's `language` gives them. */
export const LOCALISED: Record<string, Record<string, string>> = {
  Munich: { de: 'München', fr: 'Munich' },
  Cologne: { de: 'Köln' },
};

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
  {
    id: 2867714,
    name: 'Munich',
    latitude: 48.13743,
    longitude: 11.57549,
    elevation: 524.0,
    feature_code: 'PPLA',
    country_code: 'DE',
    country: 'Germany',
    admin1: 'Bavaria',
    timezone: 'Europe/Berlin',
    population: 1260391,
  },
  {
    id: 1850147,
    name: 'Tokyo',
    latitude: 35.6895,
    longitude: 139.69171,
    elevation: 44.0,
    feature_code: 'PPLC',
    country_code: 'JP',
    country: 'Japan',
    admin1: 'Tokyo',
    timezone: 'Asia/Tokyo',
    population: 9733276,
  },
];

const COUNTRY_NAMES: Record<string, Record<string, string>> = { Germany: { de: 'Deutschland', fr: 'Allemagne' } };

export async function startOpenMeteoFake(options: FakeServerOptions = {}): Promise<FakeServer> {
  return startFakeServer(
    {
      'GET /v1/search': (req) => {
        const name = (req.query.get('name') ?? '').toLowerCase();
        const count = Number(req.query.get('count') ?? 10);
        const language = req.query.get('language') ?? 'en';
        const names = (c: (typeof CITIES)[number]) => [c.name, ...Object.values(LOCALISED[c.name] ?? {})];
        const hits =
          name.length >= 2
            ? CITIES.filter((c) => names(c).some((n) => n.toLowerCase().startsWith(name)))
                .slice(0, count)
                .map((c) => ({
                  ...c,
                  name: LOCALISED[c.name]?.[language] ?? c.name,
                  country: COUNTRY_NAMES[c.country]?.[language] ?? c.country,
                }))
            : [];
        return { body: hits.length ? { results: hits, generationtime_ms: 0.9 } : { generationtime_ms: 0.4 } };
      },
      'GET /v1/forecast': (req) => {
        const lat = Number(req.query.get('latitude'));
        const lon = Number(req.query.get('longitude'));
        if (!Number.isFinite(lat) || !Number.isFinite(lon)) {
          return { status: 400, body: { error: true, reason: 'Parameter latitude and longitude must be set' } };
        }
        const days = ['2025-11-21', '2025-11-22', '2025-11-23', '2025-11-24', '2025-11-25', '2025-11-26', '2025-11-27'];
        // Warmer towards the equator: 6.4 °C at Paris' latitude.
        const shift = Math.round((48.85 - lat) * 0.5 * 10) / 10;
        const t = (x: number) => Math.round((x + shift) * 10) / 10;
        const only = (all: Record<string, unknown>, asked: string | null, keep: string[]) => {
          const wanted = new Set([...keep, ...(asked ?? '').split(',').filter(Boolean)]);
          return Object.fromEntries(Object.entries(all).filter(([k]) => wanted.has(k)));
        };
        const current = only(
          {
            time: '2025-11-21T11:00',
            interval: 900,
            temperature_2m: t(6.4),
            apparent_temperature: t(3.9),
            relative_humidity_2m: 81,
            weather_code: 3,
            wind_speed_10m: 12.3,
            wind_direction_10m: 230,
            is_day: 1,
          },
          req.query.get('current'),
          ['time', 'interval'],
        );
        const daily = only(
          {
            time: days,
            weather_code: [3, 61, 2, 0, 45, 80, 3],
            temperature_2m_max: [8.1, 7.4, 9.0, 10.2, 6.5, 7.7, 8.8].map(t),
            temperature_2m_min: [2.0, 3.3, 1.1, 0.5, 2.2, 3.0, 1.9].map(t),
          },
          req.query.get('daily'),
          ['time'],
        );
        if (req.query.get('daily') && !req.query.get('timezone')) {
          return { status: 400, body: { error: true, reason: 'Timezone is required' } };
        }
        return {
          body: {
            latitude: lat,
            longitude: lon,
            generationtime_ms: 0.08,
            utc_offset_seconds: 3600,
            timezone: 'Europe/Paris',
            timezone_abbreviation: 'GMT+1',
            elevation: 42.0,
            // Only the blocks asked for, like the real API.
            ...(req.query.get('current')
              ? {
                  current_units: {
                    time: 'iso8601',
                    interval: 'seconds',
                    temperature_2m: '°C',
                    weather_code: 'wmo code',
                  },
                  current,
                }
              : {}),
            ...(req.query.get('daily')
              ? {
                  daily_units: {
                    time: 'iso8601',
                    weather_code: 'wmo code',
                    temperature_2m_max: '°C',
                    temperature_2m_min: '°C',
                  },
                  daily,
                }
              : {}),
          },
        };
      },
    },
    options,
  );
}
