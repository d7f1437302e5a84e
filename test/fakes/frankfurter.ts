import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Frankfurter (ECB rates, v1 paths relative to FRANKFURTER_BASE_URL):
 * /latest?base=&symbols=, /currencies, and / (the descriptor). Non-EUR bases
 * are derived from the EUR rates and rounded to 5 decimals, like the real
 * service. `RATES_DATE.value` is the `date` it reports (tests may change it).
 * Fault modes come from fake-server.ts (`setMode`).
 */

/** Units of each currency per 1 EUR. */
export const EUR_RATES: Record<string, number> = {
  AUD: 1.6111,
  CAD: 1.4674,
  CHF: 0.9324,
  CNY: 7.5989,
  GBP: 0.83465,
  INR: 88.59,
  JPY: 161.52,
  SEK: 11.5345,
  USD: 1.0493,
};

export const RATES_DATE = { value: '2024-11-25' };

const NAMES: Record<string, string> = {
  AUD: 'Australian Dollar',
  CAD: 'Canadian Dollar',
  CHF: 'Swiss Franc',
  CNY: 'Chinese Renminbi Yuan',
  EUR: 'Euro',
  GBP: 'British Pound',
  INR: 'Indian Rupee',
  JPY: 'Japanese Yen',
  SEK: 'Swedish Krona',
  USD: 'United States Dollar',
};

const round = (n: number) => Math.round(n * 100000) / 100000;

export async function startFrankfurterFake(options: FakeServerOptions = {}): Promise<FakeServer> {
  return startFakeServer(
    {
      'GET /': () => ({ body: { name: 'Frankfurter', versions: { v1: '/v1' }, docs: 'https://frankfurter.dev' } }),
      'GET /currencies': () => ({ body: NAMES }),
      'GET /latest': (req) => {
        const base = (req.query.get('base') ?? req.query.get('from') ?? 'EUR').toUpperCase();
        const all: Record<string, number> = { EUR: 1, ...EUR_RATES };
        if (!(base in all)) return { status: 404, body: { message: 'not found' } };
        const wanted = (req.query.get('symbols') ?? req.query.get('to') ?? '')
          .split(',')
          .map((s) => s.trim().toUpperCase())
          .filter(Boolean);
        const rates: Record<string, number> = {};
        for (const [code, perEur] of Object.entries(all)) {
          if (code === base) continue;
          if (wanted.length && !wanted.includes(code)) continue;
          rates[code] = round(perEur / all[base]!);
        }
        if (wanted.length === 1 && wanted[0] === base) return { status: 422, body: { message: 'bad currency pair' } };
        return { body: { amount: 1.0, base, date: RATES_DATE.value, rates } };
      },
    },
    options,
  );
}
