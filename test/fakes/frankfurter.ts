import { type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Frankfurter (ECB rates, v1 paths relative to FRANKFURTER_BASE_URL):
 * /latest?base=&symbols=, /currencies, and / (the descriptor).
 */

/** Units of each currency per 1 EUR. */
export const EUR_RATES: Record<string, number> = {
  AUD: 1.6111,
  CHF: 0.9324,
  GBP: 0.83465,
  JPY: 161.52,
  USD: 1.0493,
};

const NAMES: Record<string, string> = {
  AUD: 'Australian Dollar',
  CHF: 'Swiss Franc',
  EUR: 'Euro',
  GBP: 'British Pound',
  JPY: 'Japanese Yen',
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
        return { body: { amount: 1.0, base, date: '2024-11-25', rates } };
      },
    },
    options,
  );
}
