import { z } from 'zod';
import { parseAllowHost } from './allow-hosts.js';
import { usableCores } from './cores.js';
import { parseProviderLimits } from './provider-limits.js';
import { parseRate } from './rate.js';
import { type TrustProxySetting, parseAddressList } from './trust-proxy.js';

/*
 * The one schema over the environment. Every variable Sift reads is declared
 * here; `.env.example` lists each of them (a test keeps the two in step).
 * Empty strings count as unset, so `FOO=` in a .env file means "default".
 */

const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

const str = (fallback: string) => z.preprocess(blankToUndefined, z.string().trim().default(fallback));
const optionalStr = () => z.preprocess(blankToUndefined, z.string().trim().optional()).transform((v) => v ?? '');

/** Why a variable's text is not a value: the message a failed start prints. */
class Invalid {
  constructor(readonly message: string) {}
}

/**
 * A variable read from its text (trimmed unless `trim` is false; blank: `fallback`) by `read`, which
 * returns the value, or an Invalid saying why the text is none.
 */
const readVar = <T>(fallback: string, read: (text: string) => T | Invalid, trim = true) =>
  z.preprocess(
    blankToUndefined,
    (trim ? z.string().trim() : z.string()).default(fallback).transform((v, ctx) => {
      const value = read(v);
      if (value instanceof Invalid) {
        ctx.addIssue({ code: 'custom', message: value.message });
        return z.NEVER;
      }
      return value;
    }),
  );

/** An integer in [min, max], or one of `words` (case-insensitive), each standing for a computed value. */
const int = (fallback: number | 'auto', min: number, max: number, words: Record<string, () => number> = {}) =>
  readVar(String(fallback), (v) => {
    const word = words[v.toLowerCase()];
    if (word) return word();
    const n = /^-?\d+$/.test(v) ? Number(v) : Number.NaN;
    if (Number.isNaN(n) || n < min || n > max) {
      const or = Object.keys(words)
        .map((w) => ` or ${w}`)
        .join('');
      return new Invalid(`must be an integer between ${min} and ${max}${or} (got "${v}")`);
    }
    return n;
  });

const bool = (fallback: boolean) =>
  readVar(String(fallback), (v) => {
    const s = v.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(s)) return true;
    if (['false', '0', 'no', 'off'].includes(s)) return false;
    return new Invalid(`must be true or false (got "${v}")`);
  });

const list = () =>
  z.preprocess(blankToUndefined, z.string().optional()).transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

/** A parser's answer (a string says why the text is invalid) as a value or an Invalid. */
const messageIsInvalid = <T>(parsed: T | string): T | Invalid =>
  typeof parsed === 'string' ? new Invalid(parsed) : parsed;

const rate = (fallback: string) => readVar(fallback, (v) => messageIsInvalid(parseRate(v)), false);

const providerLimits = () => readVar('', (v) => messageIsInvalid(parseProviderLimits(v)), false);

/** `v` without trailing slashes when `checked` (default `v`) is an http(s) URL. */
const httpUrl = (v: string, checked = v): string | Invalid => {
  try {
    const u = new URL(checked);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    return new Invalid(`must be an http(s) URL (got "${v}")`);
  }
  return v.replace(/\/+$/, '');
};

/** An http(s) URL; `{lang}` stands for a language where a base URL takes one (Wikipedia's host). */
const url = (fallback: string) => readVar(fallback, (v) => httpUrl(v, v.replace('{lang}', 'en')));

/** An http(s) URL, or blank for none. */
const optionalUrl = () => readVar('', (v) => (v === '' ? '' : httpUrl(v)));

/** A comma list of http(s) URLs (webhook targets); empty = none. */
const urlList = () =>
  list().transform((items, ctx) => {
    for (const item of items) {
      let ok = false;
      try {
        const u = new URL(item);
        ok = u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        /* not a URL */
      }
      if (!ok) {
        // Not echoed: a webhook URL often carries its own secret.
        ctx.addIssue({ code: 'custom', message: 'must be a comma list of http(s) URLs' });
        return z.NEVER;
      }
    }
    return items;
  });

/** The message formats of ALERT_WEBHOOK_URLS, one per URL: `#format=<name>` (src/alerts/formats.ts). */
export const ALERT_FORMATS = ['json', 'slack', 'discord', 'ntfy', 'gotify', 'uptime-kuma'] as const;
export type AlertFormat = (typeof ALERT_FORMATS)[number];

/** The format a webhook URL names in its fragment (`#format=discord`), '' for none, undefined for a fragment that names none. */
export function namedAlertFormat(url: URL): AlertFormat | '' | undefined {
  if (!url.hash) return '';
  const name = /^#format=([a-z-]+)$/.exec(url.hash)?.[1];
  return ALERT_FORMATS.find((f) => f === name);
}

/** ALERT_WEBHOOK_URLS: http(s) URLs, each with an optional `#format=<name>`. Problems name the entry, never its text. */
const webhookList = () =>
  urlList().transform((items, ctx) => {
    for (const [i, item] of items.entries()) {
      if (namedAlertFormat(new URL(item)) === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `entry ${i + 1}: a fragment must be #format=<${ALERT_FORMATS.join('|')}>`,
        });
        return z.NEVER;
      }
    }
    return items;
  });

/**
 * `TRUST_PROXY`: true/false, a hop count, or a comma list of addresses/CIDRs (trust-proxy.ts says
 * what each means); an entry that is no address stops the start rather than trusting nothing.
 */
const trustProxy = readVar('false', (v): TrustProxySetting | Invalid => {
  const s = v.toLowerCase();
  if (['true', 'yes', 'on'].includes(s)) return true;
  if (['false', 'no', 'off'].includes(s)) return false;
  if (/^\d{1,3}$/.test(s)) return Number(s);
  const parsed = parseAddressList(v);
  if ('invalid' in parsed) {
    return new Invalid(
      `must be true, false, a hop count or a comma list of addresses/CIDRs (not an address: "${parsed.invalid}")`,
    );
  }
  return v;
});

/** `CORS_ORIGINS`: a comma list of origins (`https://app.example`, normalised by URL) or `*`; empty = CORS off. */
const origins = () =>
  list().transform((items, ctx) => {
    const out: string[] = [];
    for (const item of items) {
      if (item === '*') {
        out.push(item);
        continue;
      }
      let origin = '';
      try {
        const u = new URL(item);
        const bare = u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password;
        if ((u.protocol === 'http:' || u.protocol === 'https:') && bare) origin = u.origin;
      } catch {
        /* not a URL */
      }
      if (!origin) {
        ctx.addIssue({ code: 'custom', message: `must be * or origins like https://app.example (got "${item}")` });
        return z.NEVER;
      }
      out.push(origin);
    }
    return out;
  });

/**
 * `CONTENTS_ALLOW_HOSTS`: private addresses or CIDRs, each with an optional port, that page contents
 * may be fetched from (allow-hosts.ts); an entry that is none stops the start.
 */
const allowHosts = () =>
  list().transform((items, ctx) => {
    const invalid = items.find((item) => !parseAllowHost(item));
    if (invalid !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a comma list of addresses or CIDRs, each with an optional port, like 10.0.0.0/8, 127.0.0.1:8089 or [::1]:8080 (got "${invalid}")`,
      });
      return z.NEVER;
    }
    return items;
  });

const logLevel = z.preprocess(
  blankToUndefined,
  z
    .string()
    .trim()
    .toLowerCase()
    .default('info')
    .pipe(
      z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: (issue) =>
          `must be one of fatal, error, warn, info, debug, trace, silent (got "${String(issue.input)}")`,
      }),
    ),
);

/** `LOG_FORMAT`: json lines, pretty (human-readable) lines, or auto: pretty when standard output is a terminal. */
const logFormat = z.preprocess(
  blankToUndefined,
  z
    .string()
    .trim()
    .toLowerCase()
    .default('auto')
    .pipe(
      z.enum(['auto', 'json', 'pretty'], {
        error: (issue) => `must be auto, json or pretty (got "${String(issue.input)}")`,
      }),
    ),
);

export const envSchema = z.object({
  // Server
  PORT: int(8000, 0, 65535),
  // This machine only unless asked: a laptop on a shared network exposes nothing by default.
  HOST: str('127.0.0.1'),
  DATA_DIR: str('./data'),
  DATABASE_URL: optionalStr(),
  // Not trimmed: a password may begin or end with a space.
  DATABASE_PASSWORD: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()).transform((v) => v ?? ''),
  LOG_LEVEL: logLevel,
  LOG_FORMAT: logFormat,
  // Request lines show paths only: what people search for stays out of the logs unless this is on.
  LOG_QUERIES: bool(false),
  SECRET_KEY: optionalStr().refine((v) => v === '' || v.length >= 32, {
    message: 'must be at least 32 characters long (or unset to generate one)',
  }),
  TRUST_PROXY: trustProxy,
  SHUTDOWN_TIMEOUT_MS: int(10000, 0, 600000),
  REQUEST_TIMEOUT_SECONDS: int(30, 1, 3600),
  MAX_CONNECTIONS: int(10000, 1, 1_000_000),
  // 0: no limit per client address (behind a proxy, the proxy limits its clients: docs/operations.md).
  MAX_CONNECTIONS_PER_CLIENT: int(1000, 0, 1_000_000),
  FIRST_BYTE_TIMEOUT_MS: int(10000, 100, 3_600_000),
  PUBLIC_URL: optionalUrl(),
  // auto (the default): one per core this process may use (config/cores.ts).
  WORKERS: int('auto', 1, 64, { auto: () => Math.min(64, usableCores()) }),
  CORS_ORIGINS: origins(),
  DEMO_MODE: bool(false),

  // Status and health
  STATUS_PAGE_ENABLED: bool(true),
  STATUS_MONITOR_ENABLED: bool(true),
  STATUS_MONITOR_TOKEN: optionalStr(),
  STATUS_MONITOR_PROVIDERS: list(),
  PROBE_INTERVAL_SECONDS: int(600, 0, 86400 * 7),

  // Operations: Prometheus metrics, alert webhooks
  METRICS_ENABLED: bool(false),
  METRICS_TOKEN: optionalStr(),
  ALERT_WEBHOOK_URLS: webhookList(),
  ALERT_DIGEST_WINDOW_MS: int(10000, 0, 600000),

  // API limits
  API_THROTTLE_BURST: rate('60/min'),
  API_THROTTLE_SUSTAINED: rate('5000/day'),
  API_MONTHLY_QUOTA: int(0, 0, 2_000_000_000),
  // SearXNG-compatible API: the key may be the base URL's last segment (/searxng/<key>/search).
  SEARXNG_KEY_IN_URL_ENABLED: bool(true),

  // Upstream HTTP
  PROVIDER_TIMEOUT_MS: int(0, 0, 120000),
  SIFT_USER_AGENT: str('Sift/0.1 (self-hosted metasearch; +https://github.com/sift-search/sift)'),
  DISABLED_PROVIDERS: list(),
  SEARCH_CACHE_MAX_MB: int(4, 1, 4096),
  SHARED_CACHE_MAX_MB: int(64, 0, 65536),
  PROVIDER_LIMITS: providerLimits(),
  PROVIDER_SUSPEND_AFTER_FAILURES: int(5, 0, 1000),
  PROVIDER_SUSPEND_FIRST_SECONDS: int(5, 1, 86400),
  PROVIDER_SUSPEND_MAX_SECONDS: int(300, 1, 86400),

  // Page contents (/api/v1/contents/)
  CONTENTS_ENABLED: bool(true),
  CONTENTS_ALLOW_HOSTS: allowHosts(),
  CONTENTS_MAX_BYTES: int(5 * 1024 * 1024, 64 * 1024, 100 * 1024 * 1024),
  CONTENTS_TIMEOUT_SECONDS: int(10, 1, 120),
  CONTENTS_USER_AGENT: str('Sift/0.1 (page reader bot; +https://github.com/sift-search/sift)'),
  CONTENTS_RESPECT_ROBOTS: bool(true),
  CONTENTS_HOST_CONCURRENCY: int(2, 1, 64),
  CONTENTS_CACHE_SECONDS: int(3600, 0, 30 * 86400),
  CONTENTS_CACHE_MAX_MB: int(32, 1, 65536),
  CONTENTS_EXTRACT_THREADS: int(2, 1, 64),
  CONTENTS_EXTRACT_TIMEOUT_SECONDS: int(5, 1, 120),

  // Provider credentials
  BRAVE_API_KEY: optionalStr(),
  BRAVE_SUGGEST_API_KEY: optionalStr(),
  MOJEEK_API_KEY: optionalStr(),
  MARGINALIA_API_KEY: optionalStr(),
  STAAN_API_KEY: optionalStr(),
  PIXABAY_API_KEY: optionalStr(),
  WORLDNEWS_API_KEY: optionalStr(),
  THETVDB_API_KEY: optionalStr(),
  THETVDB_PIN: optionalStr(),
  TRIPADVISOR_API_KEY: optionalStr(),
  STACKEXCHANGE_API_KEY: optionalStr(),
  LIBRETRANSLATE_URL: optionalUrl(),
  LIBRETRANSLATE_API_KEY: optionalStr(),

  // Provider base URLs (tests point these at local fakes)
  BRAVE_BASE_URL: url('https://api.search.brave.com/res/v1'),
  MOJEEK_BASE_URL: url('https://api.mojeek.com'),
  MARGINALIA_BASE_URL: url('https://api2.marginalia-search.com'),
  STAAN_BASE_URL: url('https://api.staan.ai/v2'),
  PIXABAY_BASE_URL: url('https://pixabay.com/api'),
  SEPIA_BASE_URL: url('https://sepiasearch.org/api/v1'),
  WORLDNEWS_BASE_URL: url('https://api.worldnewsapi.com'),
  WIKIPEDIA_BASE_URL: url('https://{lang}.wikipedia.org'),
  WIKIDATA_BASE_URL: url('https://www.wikidata.org'),
  THETVDB_BASE_URL: url('https://api4.thetvdb.com/v4'),
  TRIPADVISOR_BASE_URL: url('https://api.content.tripadvisor.com/api/v1'),
  STACKEXCHANGE_BASE_URL: url('https://api.stackexchange.com/2.3'),
  OPENMETEO_BASE_URL: url('https://api.open-meteo.com'),
  OPENMETEO_GEOCODING_URL: url('https://geocoding-api.open-meteo.com'),
  FRANKFURTER_BASE_URL: url('https://api.frankfurter.dev/v1'),
  NOMINATIM_BASE_URL: url('https://nominatim.openstreetmap.org'),
});

export type Env = z.output<typeof envSchema>;
export const ENV_VARIABLES = Object.keys(envSchema.shape) as (keyof Env)[];
