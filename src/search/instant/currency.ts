import { connectorList, leadingAmount, splitsAround } from './amount.js';
import { formatNumber, groupDigits, prefixMatcher, roundSignificant, spaceArrows, suffixMatcher } from './text.js';
import { currencyNames } from './intl-names.js';
import type { AnswerFields, InstantContext, InstantHandler } from './types.js';
import { CURRENCY_VOCABULARY } from './vocabulary.js';

/*
 * `currency`: money conversion at the ECB reference rates from Frankfurter,
 * kept in Postgres and refreshed at most daily (rates-store.ts): "100 usd
 * to eur", "$50 in gbp", "50 euros to yen", "usd to chf" (= 1). Both sides
 * must be currencies the feed has. Rates stored but the feed down: served
 * with `stale: true`; none stored and the feed down: no answer.
 * Fields: `amount` (for people), `amount_raw`, `from_code`, `to_code`,
 * `from_name`, `from_symbol`, `from_flag`, `to_name`, `to_symbol`,
 * `to_flag`, `result` (for people: 2 decimals, more below 1),
 * `result_raw`, `unit_rate` (1 from = unit_rate to), `date` (the feed's),
 * `stale`, `popular` (codes for a picker), `data` {`rates` (per 1 USD),
 * `meta` {code: {name, symbol, flag}}}, enough for a client-side converter.
 */

interface CurrencyMeta {
  name: string;
  symbol: string;
}

/** The currencies of the ECB reference rates (names in English; symbols are language-neutral). */
export const CURRENCIES: Record<string, CurrencyMeta> = {
  AUD: { name: 'Australian Dollar', symbol: 'A$' },
  BGN: { name: 'Bulgarian Lev', symbol: 'лв' },
  BRL: { name: 'Brazilian Real', symbol: 'R$' },
  CAD: { name: 'Canadian Dollar', symbol: 'C$' },
  CHF: { name: 'Swiss Franc', symbol: 'CHF' },
  CNY: { name: 'Chinese Yuan', symbol: '¥' },
  CZK: { name: 'Czech Koruna', symbol: 'Kč' },
  DKK: { name: 'Danish Krone', symbol: 'kr' },
  EUR: { name: 'Euro', symbol: '€' },
  GBP: { name: 'British Pound', symbol: '£' },
  HKD: { name: 'Hong Kong Dollar', symbol: 'HK$' },
  HUF: { name: 'Hungarian Forint', symbol: 'Ft' },
  IDR: { name: 'Indonesian Rupiah', symbol: 'Rp' },
  ILS: { name: 'Israeli New Shekel', symbol: '₪' },
  INR: { name: 'Indian Rupee', symbol: '₹' },
  ISK: { name: 'Icelandic Króna', symbol: 'kr' },
  JPY: { name: 'Japanese Yen', symbol: '¥' },
  KRW: { name: 'South Korean Won', symbol: '₩' },
  MXN: { name: 'Mexican Peso', symbol: 'MX$' },
  MYR: { name: 'Malaysian Ringgit', symbol: 'RM' },
  NOK: { name: 'Norwegian Krone', symbol: 'kr' },
  NZD: { name: 'New Zealand Dollar', symbol: 'NZ$' },
  PHP: { name: 'Philippine Peso', symbol: '₱' },
  PLN: { name: 'Polish Złoty', symbol: 'zł' },
  RON: { name: 'Romanian Leu', symbol: 'lei' },
  SEK: { name: 'Swedish Krona', symbol: 'kr' },
  SGD: { name: 'Singapore Dollar', symbol: 'S$' },
  THB: { name: 'Thai Baht', symbol: '฿' },
  TRY: { name: 'Turkish Lira', symbol: '₺' },
  USD: { name: 'US Dollar', symbol: '$' },
  ZAR: { name: 'South African Rand', symbol: 'R' },
};

export const POPULAR = ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'CNY', 'INR'];

/** Symbols typed before or after an amount (unambiguous ones only: "kr" could be four currencies). */
const SYMBOLS: Record<string, string> = {
  $: 'USD',
  us$: 'USD',
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
  '₹': 'INR',
  '₩': 'KRW',
  '₺': 'TRY',
  '₪': 'ILS',
  '₱': 'PHP',
  '฿': 'THB',
  r$: 'BRL',
  c$: 'CAD',
  ca$: 'CAD',
  a$: 'AUD',
  au$: 'AUD',
  nz$: 'NZD',
  hk$: 'HKD',
  s$: 'SGD',
  mx$: 'MXN',
  zł: 'PLN',
  kč: 'CZK',
};

/** A flag emoji from the currency code's country part (EUR → 🇪🇺). */
export function flagOf(code: string): string {
  const cc = code.slice(0, 2).toUpperCase();
  if (!/^[A-Z]{2}$/.test(cc)) return '';
  return String.fromCodePoint(...[...cc].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

const V = Object.values(CURRENCY_VOCABULARY);
const CONNECTORS = connectorList([...new Set(V.flatMap((v) => v.connectors))]);
const afterPrefix = prefixMatcher(V.flatMap((v) => v.prefixes));
const beforeSuffix = suffixMatcher(V.flatMap((v) => v.suffixes));

/** The code a typed currency means (code, name or symbol), or null. */
export function currencyCode(typed: string): string | null {
  const t = typed.toLowerCase().replace(/\s+/g, ' ').replace(/\.$/, '').trim();
  if (/^[a-z]{3}$/.test(t) && Object.hasOwn(CURRENCIES, t.toUpperCase())) return t.toUpperCase();
  return prepareCurrencyNames().get(t) ?? SYMBOLS[t] ?? null;
}

const SYMBOL_FIRST = new RegExp(
  `^(${Object.keys(SYMBOLS)
    .sort((a, b) => b.length - a.length)
    .map((s) => s.replace(/[$]/g, '\\$'))
    .join('|')})\\s*(.+)$`,
  'u',
);

/** "100 usd", "$100", "100$", "usd 100", "usd", "a dollar" → amount and code; null when not money. */
export function parseMoney(text: string): { amount: number; code: string } | null {
  const t = text.trim();
  const sym = SYMBOL_FIRST.exec(t);
  if (sym) {
    const lead = leadingAmount(sym[2]!);
    if (lead && lead.rest === '') return { amount: lead.amount, code: SYMBOLS[sym[1]!]! };
  }
  const lead = leadingAmount(t);
  if (lead) {
    const code = currencyCode(lead.rest);
    return code ? { amount: lead.amount, code } : null;
  }
  const words = t.split(' ');
  if (words.length > 1 && ['a', 'an', 'one'].includes(words[0]!)) {
    const code = currencyCode(words.slice(1).join(' '));
    return code ? { amount: 1, code } : null;
  }
  // "usd 100"
  const trailing = /^(.+?)\s*((?:\d[\d,]*|\d*\.\d+)(?:\.\d+)?)$/.exec(t);
  if (trailing) {
    const code = currencyCode(trailing[1]!);
    const amount = Number(trailing[2]!.replace(/,/g, ''));
    return code && Number.isFinite(amount) ? { amount, code } : null;
  }
  const code = currencyCode(t);
  return code ? { amount: 1, code } : null;
}

/*
 * Written name → code: the vocabulary's, then Intl's in each of its languages. Built on first use,
 * not with the module: gathering Intl's currency names loads ICU's data, which a start need not
 * wait for. app.ts prepares them once the server listens.
 */
let namesOfCurrencies: Map<string, string> | undefined;

export function prepareCurrencyNames(): Map<string, string> {
  if (namesOfCurrencies) return namesOfCurrencies;
  const names = new Map<string, string>(V.flatMap((v) => Object.entries(v.names)));
  for (const [name, code] of currencyNames(Object.keys(CURRENCY_VOCABULARY), Object.keys(CURRENCIES))) {
    if (!names.has(name)) names.set(name, code);
  }
  namesOfCurrencies = names;
  return names;
}

/** The conversion a query asks for, or null (no rates needed to decide); `text` as normalise() gives it (lower case). */
export function parseCurrencyQuery(text: string): { amount: number; from: string; to: string } | null {
  const spaced = spaceArrows(text);
  let s = afterPrefix(spaced) ?? spaced;
  s = beforeSuffix(s) ?? s;
  for (const [left, right] of splitsAround(s, CONNECTORS)) {
    const to = currencyCode(right);
    if (!to) continue;
    const money = parseMoney(left);
    if (!money || to === money.code) continue;
    if (!(money.amount >= 0) || money.amount > 1e15) return null;
    return { amount: money.amount, from: money.code, to };
  }
  return null;
}

export function formatMoney(x: number): string {
  if (Math.abs(x) >= 1) return groupDigits(x.toFixed(2));
  return formatNumber(x, 4);
}

export function roundMoney(x: number): number {
  return Math.abs(x) >= 1 ? Math.round(x * 100) / 100 : roundSignificant(x, 6);
}

export const currencyHandler: InstantHandler = {
  type: 'currency',
  async answer(ctx) {
    const asked = parseCurrencyQuery(ctx.text);
    return asked ? convert(ctx, asked) : null;
  },
};

/** The answer to a conversion the query asks for, at the stored rates (none stored: no answer). */
async function convert(
  ctx: InstantContext,
  asked: { amount: number; from: string; to: string },
): Promise<AnswerFields | null> {
  const table = await ctx.deps.rates.current();
  if (!table) return null;
  const fromRate = table.rates[asked.from];
  const toRate = table.rates[asked.to];
  if (!fromRate || !toRate) return null;
  const rate = toRate / fromRate;
  const value = asked.amount * rate;
  const meta: Record<string, { name: string; symbol: string; flag: string }> = {};
  for (const code of Object.keys(table.rates).sort()) {
    const m = CURRENCIES[code];
    meta[code] = { name: m?.name ?? code, symbol: m?.symbol ?? code, flag: flagOf(code) };
  }
  const answer: AnswerFields = {
    amount: formatNumber(asked.amount, 12),
    amount_raw: asked.amount,
    from_code: asked.from,
    to_code: asked.to,
    from_name: meta[asked.from]!.name,
    from_symbol: meta[asked.from]!.symbol,
    from_flag: meta[asked.from]!.flag,
    to_name: meta[asked.to]!.name,
    to_symbol: meta[asked.to]!.symbol,
    to_flag: meta[asked.to]!.flag,
    result: formatMoney(value),
    result_raw: roundMoney(value),
    unit_rate: roundSignificant(rate, 6),
    date: table.date,
    stale: table.stale,
    popular: POPULAR.filter((c) => c in table.rates),
    data: { rates: { ...table.rates }, meta },
  };
  return answer;
}
