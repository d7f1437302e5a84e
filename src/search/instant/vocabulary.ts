import { z } from 'zod';
import { type LanguageTable, entryOf, loadLanguageFiles, wordList } from '../language-files.js';

/*
 * The words that trigger each instant answer, one table per answer type keyed
 * by language, read from vocabulary/instant/<language>.json (language-files.ts).
 * Symbols and codes that do not depend on a language (`km`, `USD`, `#ff0000`,
 * `rgb(…)`, HTTP codes, ports) live beside their handler; names the platform
 * knows in every language (currencies, countries, CSS colours) come from Intl
 * or a package there, so a file lists only what those lack.
 */

export type { LanguageTable };

const phrases = z.strictObject({ phrases: wordList });
const around = z.strictObject({ prefixes: wordList, suffixes: wordList });
const nameMap = <T extends z.ZodType>(value: T) => z.record(z.string(), value);

const instantVocabulary = z.strictObject({
  /** `ip`, `uuid`, `regex`, `coin`: whole-query phrases. */
  ip: phrases,
  uuid: phrases,
  regex: phrases,
  coin: phrases,
  /** `qr`: phrases before (or after) the text; `notText`: first words showing a question about QR codes. */
  qr: z.strictObject({ prefixes: wordList, suffixes: wordList, notText: wordList }),
  /** `password`: whole-query phrases, optionally with a length ("password 24", "24 character password"). */
  password: z.strictObject({ phrases: wordList, lengthUnits: wordList, connectors: wordList }),
  /**
   * `hash`: algorithm names and the connecting words ("sha256 of hello"). A `generic` word needs "of"
   * (or quotes) after it: "hash of hello", not "hash browns"; `notText`: first words showing a question
   * about the algorithm ("md5 vs sha1").
   */
  hash: z.strictObject({
    algorithms: nameMap(z.enum(['md5', 'sha1', 'sha256', 'sha512'])),
    generic: wordList,
    connectors: wordList,
    notText: wordList,
  }),
  /**
   * `encode`: the encoding and the direction; `toWords`/`fromWords` after the payload ("hello to
   * base64", "aGk= from base64"); `notText`: first words after a bare "base64" asking about Base64.
   */
  encode: z.strictObject({
    kinds: nameMap(z.enum(['base64', 'url'])),
    actions: nameMap(z.enum(['encode', 'decode'])),
    toWords: wordList,
    fromWords: wordList,
    convertWords: wordList,
    notText: wordList,
  }),
  /** `json`: tool phrases (alone: an empty formatter), or before a JSON payload. */
  json: z.strictObject({ tools: wordList, prefixes: wordList }),
  /** `color`, `weather`, `http`: words around the value, place or status code. */
  color: around,
  weather: around,
  http: around,
  /**
   * `worldclock`: phrases around a place, and place names mapped to IANA zones: cities, zone names
   * people type, and the countries Intl does not name so (country-zones.ts has the others).
   */
  worldclock: z.strictObject({ prefixes: wordList, suffixes: wordList, places: nameMap(z.string().min(1)) }),
  /** `timestamp`: the current Unix time, or a given one converted ("unix 1700000000"). */
  timestamp: z.strictObject({ nowPhrases: wordList, prefixes: wordList, suffixes: wordList }),
  /** `timer`: stopwatch and timer phrases, and duration units in seconds. */
  timer: z.strictObject({
    stopwatch: wordList,
    timer: wordList,
    connectors: wordList,
    units: nameMap(z.number().positive()),
  }),
  /** `dice`: phrases, with an optional count or notation ("roll 2d6", "roll three dice"). */
  dice: z.strictObject({
    phrases: wordList,
    verbs: wordList,
    dieWords: wordList,
    numbers: nameMap(z.number().int().positive()),
  }),
  /** `random`: phrases, with an optional range ("random number between 1 and 10"). */
  random: z.strictObject({ phrases: wordList, between: wordList, and: wordList }),
  /** `port`: words before or after a port number (or a service name: "ssh port"). */
  port: z.strictObject({ prefixes: wordList, suffixes: wordList, servicePrefixes: wordList }),
  /** `currency`: names Intl does not give (colloquial, unqualified), and the joining words. */
  currency: z.strictObject({
    names: nameMap(z.string().regex(/^[A-Z]{3}$/)),
    connectors: wordList,
    prefixes: wordList,
    suffixes: wordList,
  }),
  /** `unit`: unit names (symbols are in units-data.ts), joining words, "how many cm in a foot" forms. */
  unit: z.strictObject({
    names: nameMap(z.string().min(1)),
    connectors: wordList,
    prefixes: wordList,
    howMany: wordList,
    articles: wordList,
  }),
  /** `base`: names of number bases and the joining words ("255 to hex", "binary 1010"). */
  base: z.strictObject({
    bases: nameMap(z.literal([2, 8, 10, 16])),
    connectors: wordList,
    prefixes: wordList,
  }),
  /** `math`: question words around an expression, and operators spelled out (replaced by their symbols). */
  math: z.strictObject({ prefixes: wordList, words: nameMap(z.string().min(1)) }),
});

const VOCABULARY = loadLanguageFiles('instant', instantVocabulary);

export const IP_VOCABULARY = entryOf(VOCABULARY, 'ip');
export const QR_VOCABULARY = entryOf(VOCABULARY, 'qr');
export const UUID_VOCABULARY = entryOf(VOCABULARY, 'uuid');
export const PASSWORD_VOCABULARY = entryOf(VOCABULARY, 'password');
export const HASH_VOCABULARY = entryOf(VOCABULARY, 'hash');
export const ENCODE_VOCABULARY = entryOf(VOCABULARY, 'encode');
export const JSON_VOCABULARY = entryOf(VOCABULARY, 'json');
export const REGEX_VOCABULARY = entryOf(VOCABULARY, 'regex');
export const COLOR_VOCABULARY = entryOf(VOCABULARY, 'color');
export const WORLDCLOCK_VOCABULARY = entryOf(VOCABULARY, 'worldclock');
export const TIMESTAMP_VOCABULARY = entryOf(VOCABULARY, 'timestamp');
export const WEATHER_VOCABULARY = entryOf(VOCABULARY, 'weather');
export const TIMER_VOCABULARY = entryOf(VOCABULARY, 'timer');
export const COIN_VOCABULARY = entryOf(VOCABULARY, 'coin');
export const DICE_VOCABULARY = entryOf(VOCABULARY, 'dice');
export const RANDOM_VOCABULARY = entryOf(VOCABULARY, 'random');
export const PORT_VOCABULARY = entryOf(VOCABULARY, 'port');
export const HTTP_VOCABULARY = entryOf(VOCABULARY, 'http');
export const CURRENCY_VOCABULARY = entryOf(VOCABULARY, 'currency');
export const UNIT_VOCABULARY = entryOf(VOCABULARY, 'unit');
export const BASE_VOCABULARY = entryOf(VOCABULARY, 'base');
export const MATH_VOCABULARY = entryOf(VOCABULARY, 'math');
