import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WeatherReport } from '../../src/providers/openmeteo/forecast.js';
import type { Gathered, ProviderTask, Upstream } from '../../src/providers/types.js';
import { leadingAmount } from '../../src/search/instant/amount.js';
import { parseCurrencyQuery } from '../../src/search/instant/currency.js';
import { hashesOf } from '../../src/search/instant/hash.js';
import { INSTANT_MAX_QUERY, instantAnswer } from '../../src/search/instant/index.js';
import { bitLength, mathHandler, toExpression, tokenize } from '../../src/search/instant/math.js';
import { HANDLERS } from '../../src/search/instant/registry.js';
import type { RatesStore, RateTable } from '../../src/search/instant/rates-store.js';
import {
  formatNumber,
  groupDigits,
  normalise,
  phraseSet,
  prefixMatcher,
  suffixMatcher,
} from '../../src/search/instant/text.js';
import { describeEpoch } from '../../src/search/instant/timestamp.js';
import type { InstantContext, InstantDeps, InstantHandler } from '../../src/search/instant/types.js';
import { testConfig } from '../helpers/app.js';
import { HUNDRED_USD_TO_EUR } from './currency-answers.js';

/*
 * The instant-answer handlers called directly (no HTTP): a table of queries
 * with the answer each must give (exact values where deterministic), queries
 * close to a trigger that must give none, and adversarial maths.
 */

const NOW = new Date('2024-07-01T12:00:00Z');

const RATES: RateTable = {
  base: 'USD',
  rates: { USD: 1, EUR: 0.9, GBP: 0.8, JPY: 150, CHF: 0.88, CAD: 1.35, INR: 83.5, AUD: 1.5, CNY: 7.2 },
  date: '2024-06-28',
  fetchedAt: NOW,
  stale: false,
};

const PARIS: WeatherReport = {
  place: {
    name: 'Paris',
    country: 'France',
    countryCode: 'FR',
    admin1: '',
    latitude: 48.85,
    longitude: 2.35,
    timezone: 'Europe/Paris',
  },
  forecast: {
    timezone: 'Europe/Paris',
    current: {
      time: '2024-07-01T14:00',
      temperature: 21.6,
      apparent: 22.4,
      humidity: 55,
      code: 2,
      windSpeed: 11.2,
      windDirection: 270,
      isDay: true,
    },
    daily: [
      { date: '2024-07-01', code: 2, max: 24.4, min: 14.5 },
      { date: '2024-07-02', code: 61, max: 19, min: 13 },
    ],
  },
};

/** How often the stubs below were asked (a query that is no answer should not cost an upstream call). */
const lookups = { upstream: 0, rates: 0 };

/** An upstream that knows the weather in Paris only (flows are run with a stub step runner). */
const upstream: Upstream = {
  async call<T>(task: ProviderTask<T>): Promise<T> {
    const [g] = await this.gather([task]);
    if (!g!.ok) throw g!.error;
    return g!.value;
  },
  async gather<T>(tasks: readonly ProviderTask<T>[]): Promise<Gathered<T>[]> {
    lookups.upstream += tasks.length;
    return tasks.map((task) => {
      const key = 'key' in task ? task.key : '';
      const value = (key.endsWith(' paris') ? PARIS : null) as T;
      return { provider: task.provider, ok: true as const, value };
    });
  },
};

const rates: RatesStore = {
  async current() {
    lookups.rates++;
    return RATES;
  },
  reset() {},
};
const deps: InstantDeps = { config: testConfig(null), upstream, rates, now: () => NOW };

async function answer(q: string, extra: { ip?: string; userAgent?: string; lang?: string } = {}) {
  return instantAnswer(deps, {
    q,
    lang: extra.lang ?? '',
    ip: extra.ip ?? '203.0.113.7',
    userAgent: extra.userAgent ?? 'test-agent',
  });
}

type Case = [query: string, expected: Record<string, unknown>];

const HELLO = hashesOf('hello');

/** Deterministic answers: every listed field must be equal (toMatchObject), plus `type` and `query`. */
const CASES: Case[] = [
  // ip
  ['what is my ip', { type: 'ip', ip: '203.0.113.7', user_agent: 'test-agent', is_local: false }],
  ['my ip', { type: 'ip', ip: '203.0.113.7' }],
  ['ip', { type: 'ip' }],
  ["What's my IP address?", { type: 'ip' }],
  ['ip address', { type: 'ip' }],
  ['whats my ip', { type: 'ip' }],
  ['my public ip', { type: 'ip' }],
  // qr
  ['qr hello world', { type: 'qr', text: 'hello world' }],
  ['qr code https://example.com/a?b=C', { type: 'qr', text: 'https://example.com/a?b=C' }],
  ['QR Code for Hello', { type: 'qr', text: 'Hello' }],
  ['qrcode "two words"', { type: 'qr', text: 'two words' }],
  ['hello there qr code', { type: 'qr', text: 'hello there' }],
  // hash
  ['md5 hello', { type: 'hash', text: 'hello', highlight: 'md5', hashes: HELLO }],
  [
    'sha1 hello',
    { type: 'hash', text: 'hello', highlight: 'sha1', hashes: { sha1: 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d' } },
  ],
  [
    'sha256 hello',
    {
      type: 'hash',
      highlight: 'sha256',
      hashes: { sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' },
    },
  ],
  ['sha512 of hello', { type: 'hash', text: 'hello', highlight: 'sha512', hashes: { sha512: HELLO.sha512 } }],
  [
    'md5 hash of hello',
    { type: 'hash', text: 'hello', highlight: 'md5', hashes: { md5: '5d41402abc4b2a76b9719d911017c592' } },
  ],
  ['hash of hello', { type: 'hash', text: 'hello', highlight: '', hashes: HELLO }],
  ['SHA-256 Hello World', { type: 'hash', text: 'Hello World', highlight: 'sha256', hashes: hashesOf('Hello World') }],
  ['md5 "a b"', { type: 'hash', text: 'a b', highlight: 'md5' }],
  // encode
  [
    'base64 encode hello',
    { type: 'encode', kind: 'base64', kind_label: 'Base64', action: 'encode', input: 'hello', output: 'aGVsbG8=' },
  ],
  ['base64 decode aGVsbG8=', { type: 'encode', kind: 'base64', action: 'decode', input: 'aGVsbG8=', output: 'hello' }],
  ['base64 encode Hello World', { output: 'SGVsbG8gV29ybGQ=' }],
  ['encode base64 héllo', { action: 'encode', output: 'aMOpbGxv' }],
  ['decode base64 aMOpbGxv', { action: 'decode', output: 'héllo' }],
  ['hello to base64', { kind: 'base64', action: 'encode', output: 'aGVsbG8=' }],
  ['aGk= from base64', { kind: 'base64', action: 'decode', output: 'hi' }],
  [
    'url encode a b&c=d',
    { type: 'encode', kind: 'url', kind_label: 'URL', action: 'encode', input: 'a b&c=d', output: 'a%20b%26c%3Dd' },
  ],
  ['urlencode hello world!', { kind: 'url', action: 'encode', output: 'hello%20world%21' }],
  ['url decode a%20b%26c', { kind: 'url', action: 'decode', output: 'a b&c' }],
  ['urldecode caf%C3%A9', { kind: 'url', action: 'decode', output: 'café' }],
  ['url decode 100%', { kind: 'url', action: 'decode', output: '100%' }],
  // uuid, password (values checked separately)
  ['uuid', { type: 'uuid' }],
  ['generate uuid', { type: 'uuid' }],
  ['GUID', { type: 'uuid' }],
  ['password', { type: 'password', length: 16 }],
  ['password generator', { type: 'password', length: 16 }],
  ['random password', { type: 'password', length: 16 }],
  ['password 24', { type: 'password', length: 24 }],
  ['32 character password', { type: 'password', length: 32 }],
  ['generate a password with 20 characters', { type: 'password', length: 20 }],
  // json
  ['json {"a":1}', { type: 'json', input: '{"a":1}', formatted: '{\n  "a": 1\n}', valid: true, error: '' }],
  ['format json [1,2]', { type: 'json', formatted: '[\n  1,\n  2\n]', valid: true }],
  [
    '{"name": "Sift", "tags": ["a"]}',
    { type: 'json', valid: true, formatted: '{\n  "name": "Sift",\n  "tags": [\n    "a"\n  ]\n}' },
  ],
  ['json formatter', { type: 'json', input: '', formatted: '', valid: null, error: '' }],
  ['json validator', { type: 'json', valid: null }],
  ['json {"a":}', { type: 'json', input: '{"a":}', formatted: '', valid: false }],
  // regex
  ['regex', { type: 'regex' }],
  ['regex tester', { type: 'regex' }],
  ['regular expression tester', { type: 'regex' }],
  // color
  [
    '#ff0000',
    {
      type: 'color',
      hex: '#FF0000',
      rgb: 'rgb(255, 0, 0)',
      hsl: 'hsl(0, 100%, 50%)',
      r: 255,
      g: 0,
      b: 0,
      h: 0,
      s: 100,
      l: 50,
    },
  ],
  ['#0f0', { type: 'color', hex: '#00FF00', r: 0, g: 255, b: 0, h: 120, s: 100, l: 50 }],
  ['rgb(0, 0, 255)', { type: 'color', hex: '#0000FF', hsl: 'hsl(240, 100%, 50%)' }],
  ['rgb(51,102,153)', { type: 'color', hex: '#336699', h: 210, s: 50, l: 40 }],
  ['hsl(120, 100%, 25%)', { type: 'color', hex: '#008000', rgb: 'rgb(0, 128, 0)', h: 120, s: 100, l: 25 }],
  ['hsl(0, 0%, 100%)', { type: 'color', hex: '#FFFFFF' }],
  ['color ff8800', { type: 'color', hex: '#FF8800', r: 255, g: 136, b: 0 }],
  ['#1e90ff to rgb', { type: 'color', rgb: 'rgb(30, 144, 255)' }],
  ['rgb(255, 255, 0) to hex', { type: 'color', hex: '#FFFF00' }],
  ['color red', { type: 'color', hex: '#FF0000' }],
  ['rebeccapurple color', { type: 'color', hex: '#663399' }],
  ['navy to hex', { type: 'color', hex: '#000080' }],
  ['#ABCDEF', { type: 'color', hex: '#ABCDEF', r: 171, g: 205, b: 239 }],
  // every written form in capitals and without parentheses too (each is looked for by its first character)
  ['RGB(1, 2, 3)', { type: 'color', hex: '#010203' }],
  ['Rgba(10 20 30 / 50%)', { type: 'color', hex: '#0A141E' }],
  ['HSLA(240, 100%, 50%, 0.3)', { type: 'color', hex: '#0000FF' }],
  ['rgb 255 0 0', { type: 'color', hex: '#FF0000' }],
  ['Hsl 120 100 25', { type: 'color', hex: '#008000' }],
  ['color #0F0', { type: 'color', hex: '#00FF00' }],
  ['HSL(120, 100%, 25%) to hex', { type: 'color', hex: '#008000', hsl: 'hsl(120, 100%, 25%)' }],
  // worldclock (NOW = 2024-07-01T12:00:00Z)
  [
    'time in tokyo',
    {
      type: 'worldclock',
      place: 'Tokyo',
      tz: 'Asia/Tokyo',
      tz_abbr: 'JST',
      time: '21:00',
      time_ampm: '9:00 PM',
      date: 'Monday, 1 July 2024',
      offset: 'UTC+09:00',
    },
  ],
  [
    'what time is it in new york',
    {
      type: 'worldclock',
      place: 'New York',
      tz: 'America/New_York',
      tz_abbr: 'EDT',
      time: '08:00',
      time_ampm: '8:00 AM',
      offset: 'UTC-04:00',
    },
  ],
  [
    'london time',
    { type: 'worldclock', place: 'London', tz: 'Europe/London', tz_abbr: 'BST', time: '13:00', offset: 'UTC+01:00' },
  ],
  [
    'time in india',
    {
      type: 'worldclock',
      place: 'India',
      tz: 'Asia/Kolkata',
      tz_abbr: 'IST',
      time: '17:30',
      time_ampm: '5:30 PM',
      offset: 'UTC+05:30',
    },
  ],
  [
    'current time in paris',
    { type: 'worldclock', tz: 'Europe/Paris', tz_abbr: 'CEST', time: '14:00', offset: 'UTC+02:00' },
  ],
  ['time in germany', { type: 'worldclock', place: 'Germany', tz: 'Europe/Berlin', time: '14:00' }],
  [
    'sydney time',
    { type: 'worldclock', tz: 'Australia/Sydney', time: '22:00', date: 'Monday, 1 July 2024', offset: 'UTC+10:00' },
  ],
  [
    'time in los angeles',
    { type: 'worldclock', tz: 'America/Los_Angeles', tz_abbr: 'PDT', time: '05:00', time_ampm: '5:00 AM' },
  ],
  [
    'utc time',
    { type: 'worldclock', place: 'UTC', tz: 'UTC', time: '12:00', time_ampm: '12:00 PM', offset: 'UTC+00:00' },
  ],
  ['time in kathmandu', { type: 'worldclock', tz: 'Asia/Kathmandu', time: '17:45', offset: 'UTC+05:45' }],
  [
    'time in honolulu',
    { type: 'worldclock', tz: 'Pacific/Honolulu', time: '02:00', time_ampm: '2:00 AM', offset: 'UTC-10:00' },
  ],
  [
    'time in auckland',
    { type: 'worldclock', tz: 'Pacific/Auckland', time: '00:00', time_ampm: '12:00 AM', date: 'Tuesday, 2 July 2024' },
  ],
  ['time in uk', { type: 'worldclock', place: 'UK', tz: 'Europe/London' }],
  ['pst time', { type: 'worldclock', tz: 'America/Los_Angeles' }],
  // timestamp
  [
    'unix timestamp',
    { type: 'timestamp', epoch: 1719835200, given: false, utc: '2024-07-01 12:00:00 UTC', iso: '2024-07-01T12:00:00Z' },
  ],
  [
    'unix 1700000000',
    {
      type: 'timestamp',
      epoch: 1700000000,
      given: true,
      utc: '2023-11-14 22:13:20 UTC',
      utc_full: 'Tuesday, 14 November 2023 22:13:20 UTC',
      iso: '2023-11-14T22:13:20Z',
    },
  ],
  [
    'timestamp 0',
    { type: 'timestamp', epoch: 0, iso: '1970-01-01T00:00:00Z', utc_full: 'Thursday, 1 January 1970 00:00:00 UTC' },
  ],
  ['1700000000 to date', { type: 'timestamp', epoch: 1700000000 }],
  ['epoch 1700000000123', { type: 'timestamp', epoch: 1700000000 }],
  ['2024-01-01 to unix', { type: 'timestamp', epoch: 1704067200, given: true }],
  ['timestamp 2000-01-01T00:00:00+02:00', { type: 'timestamp', epoch: 946677600 }],
  ['unix -86400', { type: 'timestamp', epoch: -86400, iso: '1969-12-31T00:00:00Z' }],
  // weather (the stub upstream knows Paris)
  [
    'weather paris',
    {
      type: 'weather',
      location: 'Paris',
      country: 'France',
      code: 2,
      emoji: '⛅',
      temp_c: 22,
      temp_f: 71,
      feels_c: 22,
      feels_f: 72,
      humidity: 55,
      wind_kmh: 11,
      wind_dir: 'W',
      is_day: true,
    },
  ],
  ['weather in Paris', { type: 'weather', location: 'Paris' }],
  ['paris weather', { type: 'weather', location: 'Paris' }],
  ['weather forecast for paris today', { type: 'weather', location: 'Paris' }],
  // timer
  ['stopwatch', { type: 'timer', mode: 'stopwatch', seconds: 0 }],
  ['timer', { type: 'timer', mode: 'timer', seconds: 300 }],
  ['timer 5 minutes', { type: 'timer', mode: 'timer', seconds: 300 }],
  ['10 min timer', { type: 'timer', seconds: 600 }],
  ['set a timer for 1h30m', { type: 'timer', seconds: 5400 }],
  ['timer 90 seconds', { type: 'timer', seconds: 90 }],
  ['timer 1:30', { type: 'timer', seconds: 90 }],
  ['countdown 2 hours', { type: 'timer', seconds: 7200 }],
  ['timer 15', { type: 'timer', seconds: 900 }],
  // coin, dice, random (values checked separately)
  ['flip a coin', { type: 'coin' }],
  ['coin toss', { type: 'coin' }],
  ['heads or tails', { type: 'coin' }],
  ['roll a die', { type: 'dice', count: 1, sides: 6, notation: '1d6' }],
  ['roll 2d6', { type: 'dice', count: 2, sides: 6, notation: '2d6' }],
  ['d20', { type: 'dice', count: 1, sides: 20, notation: '1d20' }],
  ['roll 3 dice', { type: 'dice', count: 3, sides: 6 }],
  ['roll two dice', { type: 'dice', count: 2, sides: 6 }],
  ['4d8', { type: 'dice', count: 4, sides: 8, notation: '4d8' }],
  ['random number', { type: 'random', min: 1, max: 100 }],
  ['random number between 1 and 10', { type: 'random', min: 1, max: 10 }],
  ['random number from 50 to 60', { type: 'random', min: 50, max: 60 }],
  ['random 5-50', { type: 'random', min: 5, max: 50 }],
  ['random number between 10 and 1', { type: 'random', min: 1, max: 10 }],
  // port
  ['port 443', { type: 'port', port: 443, known: true, service: 'HTTPS' }],
  ['port 22', { type: 'port', port: 22, known: true, service: 'SSH', protocol: 'TCP' }],
  ['5432 port', { type: 'port', port: 5432, known: true, service: 'PostgreSQL' }],
  ['tcp port 3306', { type: 'port', port: 3306, service: 'MySQL' }],
  ['port 31337', { type: 'port', port: 31337, known: false }],
  ['ssh port', { type: 'port', port: 22 }],
  ['what port does redis use', { type: 'port', port: 6379 }],
  // http
  [
    'http 404',
    {
      type: 'http',
      code: 404,
      name: 'Not Found',
      category: 'client_error',
      category_label: 'Client error',
      is_error: true,
    },
  ],
  ['404 status code', { type: 'http', code: 404 }],
  ['http status 200', { type: 'http', code: 200, name: 'OK', category: 'success', is_error: false }],
  ['301 http', { type: 'http', code: 301, name: 'Moved Permanently', category: 'redirection', is_error: false }],
  [
    'error 503',
    {
      type: 'http',
      code: 503,
      name: 'Service Unavailable',
      category: 'server_error',
      category_label: 'Server error',
      is_error: true,
    },
  ],
  ["418 i'm a teapot", { type: 'http', code: 418, name: "I'm a teapot" }],
  ['404 not found', { type: 'http', code: 404 }],
  ['status code 100', { type: 'http', code: 100, category: 'informational', category_label: 'Informational' }],
  // currency (USD 1 = EUR 0.9 = GBP 0.8 = JPY 150)
  [
    '100 usd to eur',
    {
      ...HUNDRED_USD_TO_EUR,
      result: '90.00',
      result_raw: 90,
      unit_rate: 0.9,
      date: '2024-06-28',
      stale: false,
    },
  ],
  ['$50 in gbp', { type: 'currency', from_code: 'USD', to_code: 'GBP', result: '40.00', result_raw: 40 }],
  [
    '50 euros to yen',
    { type: 'currency', from_code: 'EUR', to_code: 'JPY', result: '8,333.33', result_raw: 8333.33, unit_rate: 166.667 },
  ],
  ['usd to chf', { type: 'currency', amount: '1', amount_raw: 1, from_code: 'USD', to_code: 'CHF', result_raw: 0.88 }],
  [
    'convert 1,000 gbp to usd',
    { type: 'currency', amount: '1,000', amount_raw: 1000, result: '1,250.00', result_raw: 1250 },
  ],
  ['100 dollars in pounds', { type: 'currency', from_code: 'USD', to_code: 'GBP', result_raw: 80 }],
  ['1 jpy to usd', { type: 'currency', result: '0.006667', result_raw: 0.00666667 }],
  ['€20 to £', { type: 'currency', from_code: 'EUR', to_code: 'GBP', result_raw: 17.78 }],
  ['usd to eur exchange rate', { type: 'currency', from_code: 'USD', to_code: 'EUR' }],
  ['10 cad in inr', { type: 'currency', from_code: 'CAD', to_code: 'INR', result_raw: 618.52 }],
  // an arrow or an equals sign as the connector, spaced or not
  ['100 usd -> eur', { type: 'currency', from_code: 'USD', to_code: 'EUR', result_raw: 90 }],
  ['100 usd=gbp', { type: 'currency', from_code: 'USD', to_code: 'GBP', result_raw: 80 }],
  // unit
  [
    '10 km to miles',
    {
      type: 'unit',
      category: 'length',
      category_label: 'Length',
      amount: '10',
      amount_raw: 10,
      result: '6.21371',
      from_key: 'kilometer',
      to_key: 'mile',
      from_symbol: 'km',
      to_symbol: 'mi',
    },
  ],
  ['5 feet in cm', { type: 'unit', category: 'length', result: '152.4', result_raw: 152.4 }],
  ['1 mile to km', { type: 'unit', result: '1.60934' }],
  ['12 inches to cm', { type: 'unit', result: '30.48', result_raw: 30.48 }],
  [
    'how many feet in a mile',
    { type: 'unit', amount_raw: 1, result: '5,280', result_raw: 5280, from_key: 'mile', to_key: 'foot' },
  ],
  [
    '100 f to c',
    {
      type: 'unit',
      category: 'temperature',
      category_label: 'Temperature',
      result: '37.7778',
      from_symbol: '°F',
      to_symbol: '°C',
    },
  ],
  ['32 fahrenheit to celsius', { type: 'unit', result: '0', result_raw: 0 }],
  ['0 c to k', { type: 'unit', result: '273.15', result_raw: 273.15 }],
  ['-40 c to f', { type: 'unit', amount_raw: -40, result: '-40', result_raw: -40 }],
  ['5 pounds to kg', { type: 'unit', category: 'mass', category_label: 'Mass', result: '2.26796' }],
  ['1 kg in lbs', { type: 'unit', category: 'mass', result: '2.20462' }],
  ['16 oz to lb', { type: 'unit', category: 'mass', result: '1', result_raw: 1 }],
  ['1 gallon to liters', { type: 'unit', category: 'volume', category_label: 'Volume', result: '3.78541' }],
  ['1 l to ml', { type: 'unit', category: 'volume', result: '1,000', result_raw: 1000 }],
  [
    '2 cups to ml',
    {
      type: 'unit',
      category: 'cooking',
      category_label: 'Cooking',
      result: '473.176',
      from_key: 'cup',
      to_key: 'milliliter',
    },
  ],
  ['1 tbsp to tsp', { type: 'unit', category: 'cooking', result: '3', result_raw: 3 }],
  ['1 acre to m2', { type: 'unit', category: 'area', category_label: 'Area', result: '4,046.86' }],
  ['1 hectare in acres', { type: 'unit', category: 'area', result: '2.47105' }],
  ['60 mph to km/h', { type: 'unit', category: 'speed', category_label: 'Speed', result: '96.5606' }],
  ['100 kph in mph', { type: 'unit', category: 'speed', result: '62.1371' }],
  ['3 hours in minutes', { type: 'unit', category: 'time', category_label: 'Time', result: '180', result_raw: 180 }],
  ['1 week to days', { type: 'unit', category: 'time', result: '7' }],
  [
    '1 gb in mb',
    {
      type: 'unit',
      category: 'data',
      category_label: 'Data size',
      result: '1,000',
      from_key: 'gigabyte',
      to_key: 'megabyte',
    },
  ],
  ['1 gib to mib', { type: 'unit', category: 'data', result: '1,024' }],
  ['8 bits to bytes', { type: 'unit', category: 'data', result: '1' }],
  ['km to mi', { type: 'unit', amount_raw: 1, result: '0.621371' }],
  ['1.5 m in ft', { type: 'unit', amount: '1.5', amount_raw: 1.5, result: '4.92126' }],
  ['10km->mi', { type: 'unit', amount_raw: 10, result: '6.21371' }],
  ['10 km → mi', { type: 'unit', amount_raw: 10, result: '6.21371' }],
  // base
  ['255 to hex', { type: 'base', dec: '255', hex: 'FF', bin: '11111111', oct: '377', value: 255 }],
  ['0xff', { type: 'base', dec: '255', value: 255 }],
  ['0b1010 to decimal', { type: 'base', dec: '10', hex: 'A', bin: '1010', oct: '12', value: 10 }],
  ['hex ff', { type: 'base', value: 255 }],
  ['ff hex to decimal', { type: 'base', value: 255 }],
  ['binary 1010', { type: 'base', value: 10 }],
  ['10 in binary', { type: 'base', bin: '1010' }],
  ['0o777', { type: 'base', dec: '511' }],
  ['4096 to octal', { type: 'base', oct: '10000', hex: '1000' }],
  ['-255 to hex', { type: 'base', hex: '-FF', value: -255 }],
  // math
  ['2+2', { type: 'math', expr: '2+2', result: '4', raw: 4 }],
  ['2 + 2 =', { type: 'math', result: '4', raw: 4 }],
  ['what is 6*7', { type: 'math', result: '42', raw: 42 }],
  ['calculate (1+2)*3', { type: 'math', result: '9', raw: 9 }],
  ['10 / 4', { type: 'math', result: '2.5', raw: 2.5 }],
  ['1/3', { type: 'math', result: '0.333333333333' }],
  ['0.1+0.2', { type: 'math', result: '0.3' }],
  ['2^10', { type: 'math', result: '1,024', raw: 1024 }],
  ['2**10', { type: 'math', raw: 1024 }],
  ['2^100', { type: 'math', result: '1,267,650,600,228,229,401,496,703,205,376' }],
  ['10!', { type: 'math', result: '3,628,800', raw: 3628800 }],
  ['sqrt(16)', { type: 'math', result: '4', raw: 4 }],
  ['square root of 81', { type: 'math', raw: 9 }],
  ['sin(pi/2)', { type: 'math', raw: 1 }],
  ['cos(0)', { type: 'math', raw: 1 }],
  ['log(1000)', { type: 'math', raw: 3 }],
  ['ln(1)', { type: 'math', raw: 0 }],
  ['15% of 200', { type: 'math', result: '30', raw: 30 }],
  ['5 x 3', { type: 'math', raw: 15 }],
  ['7 times 6', { type: 'math', raw: 42 }],
  ['10 mod 3', { type: 'math', raw: 1 }],
  ['-7 % 3', { type: 'math', raw: 2 }],
  ['-2^2', { type: 'math', raw: -4 }],
  ['2^-1', { type: 'math', raw: 0.5 }],
  ['1000*1000', { type: 'math', result: '1,000,000', raw: 1000000 }],
  ['1,000 + 1', { type: 'math', raw: 1001 }],
  ['3²', { type: 'math', raw: 9 }],
  ['2 × 3 ÷ 4', { type: 'math', raw: 1.5 }],
  ['max(3, 7, 2)', { type: 'math', raw: 7 }],
  ['abs(-5) + 1', { type: 'math', raw: 6 }],
  ['2pi', { type: 'math', result: '6.28318530718' }],
  ['1000!/999!', { type: 'math', raw: 1000 }],
  ['0.5 * -4', { type: 'math', raw: -2 }],
  ['round(2.567, 2)', { type: 'math', raw: 2.57 }],
  // plain digits and operators: the expression as typed, spaces around ^ dropped, commas still thousands separators
  ['12 * 34 + 5', { type: 'math', expr: '12 * 34 + 5', raw: 413 }],
  ['2 ^ 10', { type: 'math', expr: '2^10', raw: 1024 }],
  ['1,000,000 / 4', { type: 'math', expr: '1000000 / 4', raw: 250000 }],
];

/** Queries close to a trigger that are not one. */
const NEAR_MISSES = [
  'what is an ip address',
  'ip man',
  'ip address class c',
  'qr',
  'qr code',
  'qr code generator',
  'qr code scanner app',
  'uuid python',
  'password manager',
  'forgot password',
  'md5',
  'md5 vs sha256',
  'sha256 algorithm',
  'hash browns',
  'base64',
  'base64 encoding',
  'base64 image',
  'base64 decode',
  'url encoder',
  'json',
  'json tutorial',
  'regex for email',
  'color',
  'red',
  'colour theory',
  'time',
  'screen time',
  'christmas time',
  'prime time',
  'time management',
  'weather',
  'weather app',
  'sales forecast',
  'temperature in celsius',
  'timer app',
  'coin',
  'coinbase',
  'dice game',
  'd3',
  'random',
  'random word',
  'port',
  'port of spain',
  'port 70000',
  'http',
  'http 299',
  'https://example.com',
  '404',
  'usd',
  'eur to',
  'km',
  'hex',
  'oct 31',
  'dec 25',
  '42',
  'pi',
  'e',
  '-5',
  '(5)',
  '2024-01-01',
  '1-800-flowers',
  'covid-19',
  'iphone 15 pro',
  'windows 11',
  'what is my name',
  'sqrt',
  '2 +',
  'x + 1',
  'flip',
  'how to flip a coin',
  'unix',
  'epoch',
];

/** Adversarial maths: each must come back quickly with null (or a bounded answer), never throw. */
const ADVERSARIAL = [
  '1e309',
  '1e309 * 2',
  '2^1001',
  '9^9^9',
  '10^10^10',
  '2^(2^(2^(2^(2^5))))',
  '(2^1000)^1000',
  '10000!',
  '99999999!',
  '171!',
  '(10!)!',
  '1000!^1000',
  '1/0',
  '0/0',
  '5 % 0',
  '0^-1',
  '(-8)^(1/3)',
  'sqrt(-1)',
  'ln(0)',
  `${'('.repeat(200)}1${')'.repeat(200)}`,
  `${'('.repeat(60)}1+1${')'.repeat(60)}`,
  `1${'+1'.repeat(139)}`,
  `${'9'.repeat(280)}`,
  `${'9'.repeat(270)}*${'9'.repeat(8)}`,
  `2${'^2'.repeat(139)}`,
  `${'-'.repeat(279)}1`,
  `${'sqrt('.repeat(50)}2${')'.repeat(50)}`,
  '1e308 * 10',
  '0x' + 'f'.repeat(270) + '*2',
  'fact(1000)*fact(1000)*fact(1000)*fact(1000)*fact(1000)*fact(1000)*fact(1000)',
];

describe('instant answers: table of queries', () => {
  it('has at least 150 cases over every answer type, in the reference order', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(150);
    const types = new Set(CASES.map(([, e]) => e.type));
    expect(HANDLERS.map((h) => h.type)).toEqual([
      'ip',
      'qr',
      'uuid',
      'password',
      'hash',
      'encode',
      'json',
      'regex',
      'color',
      'worldclock',
      'timestamp',
      'weather',
      'timer',
      'coin',
      'dice',
      'random',
      'port',
      'http',
      'currency',
      'unit',
      'base',
      'math',
    ]);
    for (const h of HANDLERS) expect(types.has(h.type), h.type).toBe(true);
  });

  it.each(CASES)('%s', async (query, expected) => {
    const a = await answer(query);
    expect(a, query).not.toBeNull();
    expect(a).toMatchObject({ ...expected, query: query.trim() });
  });
});

describe('instant answers: values that change each time', () => {
  it('uuid: five version-4 UUIDs, the first is `value`', async () => {
    const a = (await answer('uuid'))!;
    const values = a.values as string[];
    expect(values).toHaveLength(5);
    expect(new Set(values).size).toBe(5);
    for (const v of values) expect(v).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.value).toBe(values[0]);
  });

  it('password: the asked length, mixed classes, different each time', async () => {
    const a = (await answer('password'))!;
    const b = (await answer('password'))!;
    expect(a.value).toHaveLength(16);
    expect(a.value).not.toBe(b.value);
    expect(a.value).toMatch(/[a-z]/);
    expect(a.value).toMatch(/[A-Z]/);
    expect(a.value).toMatch(/[0-9]/);
    expect((await answer('password 64'))!.value).toHaveLength(64);
    expect(await answer('password 3')).toBeNull();
    expect(await answer('password 500')).toBeNull();
  });

  it('coin, dice and random stay in range', async () => {
    const coins = new Set<unknown>();
    for (let i = 0; i < 40; i++) coins.add((await answer('flip a coin'))!.result);
    expect([...coins].sort()).toEqual(['Heads', 'Tails']);
    const dice = (await answer('roll 10d6'))!;
    const rolls = dice.rolls as number[];
    expect(rolls).toHaveLength(10);
    for (const r of rolls) expect(r >= 1 && r <= 6).toBe(true);
    expect(dice.total).toBe(rolls.reduce((x, y) => x + y, 0));
    for (let i = 0; i < 20; i++) {
      const r = (await answer('random number between 3 and 5'))!;
      expect([3, 4, 5]).toContain(r.value);
    }
    expect(await answer('roll 101d6')).toBeNull();
    expect(await answer('roll 1d1')).toBeNull();
  });

  it('qr: an SVG document', async () => {
    const a = (await answer('qr https://example.com'))!;
    expect(a.svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\s*$/s);
  });

  it('weather: seven-day shape with Monday-based weekdays and today flagged', async () => {
    const a = (await answer('weather paris'))!;
    expect(a.daily).toEqual([
      { weekday: 0, code: 2, emoji: '⛅', high_c: 24, low_c: 15, high_f: 76, low_f: 58, is_today: true },
      { weekday: 1, code: 61, emoji: '🌦️', high_c: 19, low_c: 13, high_f: 66, low_f: 55, is_today: false },
    ]);
    expect(await answer('weather atlantis')).toBeNull();
  });

  it('ip: loopback and private addresses are local; IPv4-mapped IPv6 is shown as IPv4', async () => {
    for (const [ip, local, shown] of [
      ['127.0.0.1', true, '127.0.0.1'],
      ['::1', true, '::1'],
      ['::ffff:10.1.2.3', true, '10.1.2.3'],
      ['192.168.1.20', true, '192.168.1.20'],
      ['172.16.0.1', true, '172.16.0.1'],
      ['172.32.0.1', false, '172.32.0.1'],
      ['fd12:3456::1', true, 'fd12:3456::1'],
      ['fe80::1', true, 'fe80::1'],
      ['2001:db8::1', false, '2001:db8::1'],
      ['8.8.8.8', false, '8.8.8.8'],
    ] as const) {
      expect(await answer('my ip', { ip })).toMatchObject({ ip: shown, is_local: local });
    }
    expect(await answer('my ip', { ip: '' })).toMatchObject({ ip: 'Unavailable', is_local: false });
  });
});

describe('instant answers: no answer', () => {
  it('has at least 30 near misses', () => {
    expect(NEAR_MISSES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(NEAR_MISSES)('%s → null, asking no upstream', async (query) => {
    const before = { ...lookups };
    expect(await answer(query)).toBeNull();
    expect(lookups).toEqual(before);
  });

  it('queries over 280 characters get none, even valid ones', async () => {
    const q = `11${'+1'.repeat((INSTANT_MAX_QUERY - 2) / 2)}`;
    expect(q.length).toBe(INSTANT_MAX_QUERY);
    expect(await answer(q)).toMatchObject({ type: 'math', raw: 150 });
    expect(await answer(`${q}+1`)).toBeNull();
    expect(await answer(`qr ${'x'.repeat(278)}`)).toBeNull();
    // characters, not UTF-16 units
    expect(await answer(`qr ${'😀'.repeat(277)}`)).toMatchObject({ type: 'qr' });
  });
});

describe('instant answers: adversarial maths', () => {
  it.each(ADVERSARIAL.map((q) => [q.length > 40 ? `${q.slice(0, 40)}… (${q.length} chars)` : q, q]))(
    '%s is answered safely',
    async (_label, query) => {
      // Its cost is bounded by the work limit (math-work.test.ts counts it; bench/math-work.ts times it).
      const a = await answer(query);
      if (a !== null) {
        expect(a.type).toBe('math');
        expect(Number.isFinite(a.raw)).toBe(true);
        expect(typeof a.result).toBe('string');
      }
    },
  );

  it('gives null for overflow, division by zero and out-of-bound operands', async () => {
    for (const q of [
      '1e309',
      '1e309 * 2',
      '2^1001',
      '9^9^9',
      '10000!',
      '171!',
      '1/0',
      '5 % 0',
      '0^-1',
      'sqrt(-1)',
      '1e308 * 10',
    ]) {
      expect(await answer(q), q).toBeNull();
    }
    expect(await answer(`${'('.repeat(60)}1+1${')'.repeat(60)}`)).toBeNull();
    expect(await answer(`${'('.repeat(30)}1+1${')'.repeat(30)}`)).toMatchObject({ raw: 2 });
  });

  it('never evaluates code', async () => {
    for (const q of [
      'constructor.constructor("return process")()',
      '__proto__ + 1',
      'process.exit(1)',
      'import("fs")',
      'require("child_process")',
      'this.constructor + 1',
      'eval(1+1)',
      'Function("return 1")()',
      'toString(1)+1',
      'valueOf + 1',
      'hasOwnProperty(1)',
    ]) {
      expect(await answer(q), q).toBeNull();
    }
  });
});

describe('instant answers: a handler that throws', () => {
  it('is skipped and logged; the next handler answers', async () => {
    const warnings: unknown[] = [];
    const broken: InstantHandler = {
      type: 'broken',
      answer() {
        throw new Error('boom');
      },
    };
    const handlers = [broken, ...HANDLERS];
    const a = await instantAnswer(
      { ...deps, log: { warn: (obj) => warnings.push(obj) } },
      { q: '2+2', lang: '', ip: '', userAgent: '' },
      handlers,
    );
    expect(a).toMatchObject({ type: 'math', raw: 4 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ handler: 'broken' });
  });

  it('is logged on the request’s logger when the request brings one, not on the shared one', async () => {
    const shared: unknown[] = [];
    const own: unknown[] = [];
    const broken: InstantHandler = {
      type: 'broken',
      answer() {
        throw new Error('boom');
      },
    };
    const a = await instantAnswer(
      { ...deps, log: { warn: (obj) => shared.push(obj) } },
      { q: '2+2', lang: '', ip: '', userAgent: '', log: { warn: (obj) => own.push(obj) } },
      [broken, ...HANDLERS],
    );
    expect(a).toMatchObject({ type: 'math', raw: 4 });
    expect(own).toEqual([expect.objectContaining({ handler: 'broken' })]);
    expect(shared).toEqual([]);
  });

  it('a handler whose promise rejects is skipped and logged; the handlers after it still answer', async () => {
    const warnings: unknown[] = [];
    const rejecting: InstantHandler = { type: 'rejecting', answer: () => Promise.reject(new Error('no rates')) };
    const nothing: InstantHandler = { type: 'nothing', answer: () => Promise.resolve(null) };
    const a = await instantAnswer(
      { ...deps, log: { warn: (obj) => warnings.push(obj) } },
      { q: '2+2', lang: '', ip: '', userAgent: '' },
      [rejecting, nothing, ...HANDLERS],
    );
    expect(a).toMatchObject({ type: 'math', raw: 4, query: '2+2' });
    expect(warnings).toEqual([expect.objectContaining({ handler: 'rejecting' })]);
  });

  it('a handler that waits gives its answer once it has it, before the handlers after it', async () => {
    const request = { q: '2+2', lang: '', ip: '', userAgent: '' };
    expect(await instantAnswer(deps, request)).toMatchObject({ type: 'math', raw: 4 });
    const waiting: InstantHandler = {
      type: 'waiting',
      answer: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        return { value: 1 };
      },
    };
    expect(await instantAnswer(deps, request, [waiting, ...HANDLERS])).toEqual({
      type: 'waiting',
      value: 1,
      query: '2+2',
    });
  });

  it('a handler setting its own `query` keeps it', async () => {
    const own: InstantHandler = { type: 'own', answer: async () => ({ query: 'mine' }) };
    expect(await instantAnswer(deps, { q: 'x', lang: '', ip: '', userAgent: '' }, [own])).toEqual({
      type: 'own',
      query: 'mine',
    });
  });
});

describe('instant answers: fuzzed queries', () => {
  const WORDS = [
    'time in',
    'weather',
    'qr',
    'md5',
    'base64 encode',
    'url decode',
    'json',
    '#',
    'rgb(',
    'hsl(',
    'timer',
    'roll',
    'd',
    'random number',
    'port',
    'http',
    'usd',
    'to',
    'eur',
    'km',
    'in',
    'hex',
    '0x',
    '0b',
    '(',
    ')',
    '^',
    '!',
    '%',
    '*',
    '/',
    '+',
    '-',
    '1',
    '9',
    '999',
    '.',
    ',',
    'e',
    'pi',
    'sqrt',
    'log',
    ' ',
    '°',
    'of',
    'between',
    'and',
    'unix',
    '2024-01-01',
    ':',
    '"',
    "'",
    '\u0000',
    '😀',
    'ß',
    'İ',
    '\uD800',
  ];

  it('no handler throws and every answer is plain JSON', async () => {
    const warnings: unknown[] = [];
    const quiet = { ...deps, log: { warn: (obj: unknown) => warnings.push(obj) } };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 40 }).map((w) => w.join(' ')),
          fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 60 }).map((w) => w.join('')),
          fc.string({ maxLength: 300 }),
        ),
        async (q) => {
          const a = await instantAnswer(quiet, { q, lang: '', ip: '', userAgent: '' });
          if (a !== null) expect(JSON.parse(JSON.stringify(a))).toEqual(a);
        },
      ),
      { numRuns: 1500 },
    );
    expect(warnings).toEqual([]);
  });
});

describe('maths: the size of an integer against the limits', () => {
  it('counts four bits per hex digit of the magnitude, for small and large integers of either sign', () => {
    const hexBits = (v: bigint) => (v === 0n ? 0 : (v < 0n ? -v : v).toString(16).length * 4);
    const edges = [
      0n,
      1n,
      15n,
      16n,
      255n,
      256n,
      0xfffffffn,
      0x10000000n,
      0xffffffffn,
      0x100000000n,
      2n ** 64n,
      10n ** 40n,
    ];
    for (const v of edges) {
      expect(bitLength(v)).toBe(hexBits(v));
      expect(bitLength(-v)).toBe(hexBits(v));
    }
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (v) => {
        expect(bitLength(v)).toBe(hexBits(v));
      }),
    );
  });
});

describe('maths errors', () => {
  it('refuses bad input with a named MathError and its reason', async () => {
    const { evaluate, MathError } = await import('../../src/search/instant/math.js');
    const refusal = (() => {
      try {
        evaluate('1/0');
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(MathError);
    expect(refusal).toBeInstanceOf(Error);
    expect((refusal as Error).name).toBe('MathError');
    expect((refusal as Error).message).toBe('division by zero');
    expect(String(refusal)).toBe('MathError: division by zero');
  });
});

describe('maths: the names an expression may use', () => {
  /** Names the evaluator takes: its constants and its functions, and the degree words. */
  const KNOWN = [
    ...['pi', 'e', 'tau', 'phi'],
    ...['sqrt', 'cbrt', 'abs', 'round', 'floor', 'ceil', 'trunc', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan'],
    ...['arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh', 'exp', 'ln', 'log10', 'log2', 'log', 'min', 'max'],
    ...['gcd', 'lcm', 'fact', 'factorial'],
  ];
  const DEGREES = ['deg', 'degree', 'degrees'];
  const number = fc.oneof(fc.integer({ min: 0, max: 999 }).map(String), fc.constant('2.5'), fc.constant('0x1f'));
  const operator = fc.constantFrom('+', '-', '*', '/', '^', '%', '!', '(', ')', ',', '**');
  const known = fc.constantFrom(...KNOWN, ...DEGREES);
  /** Lowercase words that are no name of the evaluator's, nor words toExpression turns into symbols ("plus"). */
  const unknown = fc
    .stringMatching(/^[a-z]{2,8}$/)
    .filter((w) => !KNOWN.includes(w) && !DEGREES.includes(w) && toExpression(`${w} 2`) === `${w} 2`);

  function context(q: string): InstantContext {
    return { q, text: q, lang: '', ip: '', userAgent: '', deps, now: NOW };
  }

  /** Each query answers maths, its `raw` the number given. */
  async function expectMaths(cases: [string, number][]): Promise<void> {
    for (const [q, raw] of cases) {
      const found = await answer(q);
      expect(found, q).toMatchObject({ type: 'math' });
      expect(found?.raw as number, q).toBeCloseTo(raw, 9);
    }
  }

  it('reads every expression made of its own names, numbers and operators (the quick refusal refuses none of them)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(number, operator, known), { minLength: 1, maxLength: 12 }), (parts) => {
        expect(tokenize(parts.join(' '))).not.toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it('answers nothing for an expression holding a name it does not know, wherever the name stands', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(number, operator, known), { maxLength: 8 }),
        fc.nat(8),
        unknown,
        async (parts, at, word) => {
          const q = [...parts.slice(0, at), word, ...parts.slice(at)].join(' ');
          expect(tokenize(q)).toBeNull();
          expect(await mathHandler.answer(context(q))).toBeNull();
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('reads every operator symbol it knows, typed alone between numbers', async () => {
    const cases: [string, number][] = [
      ...['2×3', '2✕3', '2⋅3', '2·3'].map((q): [string, number] => [q, 6]),
      ...['6÷3', '6∕3'].map((q): [string, number] => [q, 2]),
      ...['5−2', '5–2', '5—2'].map((q): [string, number] => [q, 3]),
      ['3²', 9],
      ['2³', 8],
      ['2π', 2 * Math.PI],
      ['√16', 4],
    ];
    await expectMaths(cases);
  });

  it('gives queries that are not maths no answer, and still reads constants, functions and degree words', async () => {
    for (const q of [
      'best pizza 2024',
      'restaurants near me',
      'philosophy of mind 2',
      'iphone 15 review',
      'x + 1',
      '2 # 3',
    ]) {
      expect(await answer(q)).toBeNull();
    }
    const cases: [string, number][] = [
      ['sin 30 degrees', 0.5],
      ['cos 60 deg', 0.5],
      ['e^2', Math.E ** 2],
      ['tau/2', Math.PI],
      ['phi * 2', 1 + Math.sqrt(5)],
      ['factorial(5)', 120],
      ["what's 2+2", 4],
    ];
    await expectMaths(cases);
  });
});

describe('query normalisation', () => {
  it('lowercases, straightens typographic quotes, collapses whitespace and drops a trailing ?, ! or .', async () => {
    const { normalise } = await import('../../src/search/instant/text.js');
    for (const [q, normal] of [
      ['7 km in miles', '7 km in miles'],
      ['md5 hello 7', 'md5 hello 7'],
      ['2 ^ 10', '2 ^ 10'],
      ['100 usd -> eur', '100 usd -> eur'],
      ['what is 2+2 ?', 'what is 2+2'],
      ['A b', 'a b'],
      ['x.', 'x'],
      ['a  b', 'a b'],
      ['  What\u2019s  \u201cUp\u201d?!. ', 'what\'s "up"'],
      ['a\tb\u00a0c\nd', 'a b c d'],
      ['...', ''],
    ]) {
      expect(normalise(q!)).toBe(normal);
    }
  });

  it('gives a normal query back unchanged, for any text', async () => {
    const { normalise } = await import('../../src/search/instant/text.js');
    const chars = [...'aZ09 .?!\t\n*+-/:,"\'()é\u00a0\u2018\u2019\u02bc\u201c\u201d\u2028~@[`{'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...chars), { maxLength: 12 }), (parts) => {
        const once = normalise(parts.join(''));
        expect(normalise(once)).toBe(once);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('text helpers and parsers', () => {
  it('groups digits and writes numbers for people', () => {
    for (const [plain, grouped] of [
      ['1234567.5', '1,234,567.5'],
      ['-1000', '-1,000'],
      ['999', '999'],
      ['100000', '100,000'],
      ['12345678901234567890', '12,345,678,901,234,567,890'],
      ['1.', '1'],
      ['', ''],
    ] as const) {
      expect(groupDigits(plain)).toBe(grouped);
    }
    expect(formatNumber(7670.82736817, 6)).toBe('7,670.83');
    expect(formatNumber(2.5, 12)).toBe('2.5');
    expect(formatNumber(-0.0000001, 12)).toBe('-0.0000001');
  });

  it('matches a phrase written in capitals, with the long s or the Kelvin sign', () => {
    const prefix = prefixMatcher(['sha256', 'kilo']);
    const suffix = suffixMatcher(['in hours', 'to kilo']);
    expect(prefix('SHA256 hello')).toBe('hello');
    expect(prefix('ſha256 hello')).toBe('hello');
    expect(prefix('\u212Ailo 5')).toBe('5');
    expect(prefix('17 sha256 hello')).toBeNull();
    expect(suffix('3 days IN HOURS')).toBe('3 days');
    expect(suffix('3 days in hourſ')).toBe('3 days');
    expect(suffix('5 to kilo')).toBe('5');
    expect(suffix('5 to kilos')).toBeNull();
    // A phrase that starts or ends with a space: any space may stand there.
    expect(prefixMatcher([' x'])('\u00a0x y')).toBe('y');
    expect(suffixMatcher(['x '])('y x\u2003')).toBe('y');
    expect(phraseSet(['Ab'])('ab')).toBe(true);
    expect(phraseSet(['ab'])('abc')).toBe(false);
  });

  it('reads amounts, and the conversion a currency query asks for', () => {
    expect(leadingAmount('2.5 km')).toEqual({ amount: 2.5, rest: 'km' });
    expect(leadingAmount('1,000.5 km')).toEqual({ amount: 1000.5, rest: 'km' });
    // A suffix after the target, a final point, a target of two words, a symbol as target.
    for (const [q, expected] of [
      ['100 usd to eur exchange rate', { amount: 100, from: 'USD', to: 'EUR' }],
      ['100 usd to eur.', { amount: 100, from: 'USD', to: 'EUR' }],
      ['convert 5 euros in us dollars', { amount: 5, from: 'EUR', to: 'USD' }],
      ['50 gbp -> €', { amount: 50, from: 'GBP', to: 'EUR' }],
      ['17 km in miles', null],
      ['17 * 7 + 3', null],
    ] as const) {
      expect(parseCurrencyQuery(normalise(q))).toEqual(expected);
    }
  });

  it('reads expressions: spacing, numbers in any base and case, any kind of space', async () => {
    expect(toExpression('12 * 34 + 5')).toBe('12 * 34 + 5');
    expect(toExpression(' 2 ^ 10 ')).toBe('2^10');
    // An integer carries its size in bits (four per hex digit) besides its value.
    expect(tokenize('0X1f\u3000+ 0b11')).toEqual([
      { t: 'num', value: { int: true, v: 31n, bits: 8 } },
      { t: 'op', op: '+' },
      { t: 'num', value: { int: true, v: 3n, bits: 4 } },
    ]);
    expect(tokenize('2.50')).toEqual([{ t: 'num', value: { int: false, v: 2.5 } }]);
    expect(tokenize('007')).toEqual([{ t: 'num', value: { int: true, v: 7n, bits: 4 } }]);
    expect(tokenize('2 ~ 3')).toBeNull();
    // Dates, phone numbers and versions look like arithmetic but are none.
    for (const q of ['2024-01-31', '1/2/2024', '+1 555 123 4567', '(555) 123-4567', '555-123-4567', '1.2.3']) {
      expect(await answer(q), q).toBeNull();
    }
    expect(await answer('17 * 7 + 3')).toMatchObject({ type: 'math', raw: 122 });
  });

  it('describes a Unix time in UTC, from year 1 on', () => {
    expect(describeEpoch(1700000000, true)).toEqual({
      epoch: 1700000000,
      given: true,
      utc: '2023-11-14 22:13:20 UTC',
      utc_full: 'Tuesday, 14 November 2023 22:13:20 UTC',
      iso: '2023-11-14T22:13:20Z',
    });
    expect(describeEpoch(-62135596800, false)).toMatchObject({
      utc: '0001-01-01 00:00:00 UTC',
      utc_full: 'Monday, 1 January 1 00:00:00 UTC',
      iso: '0001-01-01T00:00:00Z',
    });
  });
});
