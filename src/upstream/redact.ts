/*
 * Keeping secrets out of error text and logs. Some upstreams take their key
 * as a query parameter (Mojeek `api_key`, Pixabay `key`, Stack Exchange
 * `key`), others in a header; an upstream may also echo the request back in
 * an error body. Everything that reaches an error message or a log line goes
 * through here.
 */

const SECRET_PARAM = /^(key|api_key|apikey|api-key|token|access_token|password|pin|secret)$/i;
/** Request headers whose values are not secret. */
const PLAIN_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'content-type',
  'user-agent',
  'cache-control',
]);
/** Values shorter than this are not treated as secrets (they would blank out ordinary words). */
const MIN_SECRET_LENGTH = 4;

/** A path segment as an API names its endpoints (`api`, `rest_v1`, `search`), not a value put in the path. */
const ROUTE_SEGMENT = /^[a-z][a-z0-9_.-]{0,30}$/;

/**
 * The URL without credentials, query string or fragment, and with every path segment that is not
 * a lower-case route word masked (`…`): a value some upstreams take in the path (an article title)
 * comes from what the caller searched for, which logs never show (LOG_QUERIES). Safe to log.
 */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname
      .split('/')
      .map((segment) => (segment === '' || ROUTE_SEGMENT.test(segment) ? segment : '…'))
      .join('/');
    return `${u.protocol}//${u.host}${path}`;
  } catch {
    return '[invalid url]';
  }
}

/** The secret values a request carries: secret-named query parameters, credential headers, URL user info. */
export function requestSecrets(url: string, headers: Record<string, string> = {}): string[] {
  const out: string[] = [];
  try {
    const u = new URL(url);
    for (const [name, value] of u.searchParams) if (SECRET_PARAM.test(name)) out.push(value);
    if (u.username) out.push(decodeURIComponent(u.username));
    if (u.password) out.push(decodeURIComponent(u.password));
  } catch {
    /* not a URL: nothing to collect */
  }
  for (const [name, value] of Object.entries(headers)) {
    if (PLAIN_HEADERS.has(name.toLowerCase())) continue;
    out.push(value);
    const parts = value.trim().split(/\s+/);
    if (parts.length === 2 && parts[1]) out.push(parts[1]);
  }
  return out;
}

/** Values of a request shorter than this are not looked for in its answer (they would blank out ordinary words). */
const MIN_CALLER_TEXT_LENGTH = 4;

/**
 * The values a request carries that may be a caller's text: its query parameters' values, the
 * string values of a JSON or form body, and the path's segments that are no route word (an article
 * title; with its underscores as spaces too). Numbers and very short values are left out. An
 * upstream's error may echo them; a failure recorded for every user to see (`last_error`) must not.
 */
export function requestValues(url: string, body?: string): string[] {
  const out: string[] = [];
  const keep = (v: unknown) => {
    if (typeof v === 'string' && v.length >= MIN_CALLER_TEXT_LENGTH && !/^\d+$/.test(v)) out.push(v);
  };
  try {
    const u = new URL(url);
    for (const [, value] of u.searchParams) keep(value);
    for (const segment of u.pathname.split('/')) {
      if (segment === '' || ROUTE_SEGMENT.test(segment)) continue;
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        /* as sent */
      }
      keep(decoded);
      if (decoded.includes('_')) keep(decoded.replace(/_/g, ' '));
    }
  } catch {
    /* not a URL: nothing to collect */
  }
  if (body) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      for (const [, value] of new URLSearchParams(body)) keep(value);
    }
    if (parsed && typeof parsed === 'object') for (const value of Object.values(parsed)) keep(value);
  }
  return out;
}

/** Replaces every occurrence of each value (in any case, raw and URL-encoded) with `[…]`. */
export function redactCallerText(text: string, values: Iterable<string>): string {
  const all = new Set<string>();
  for (const v of values) {
    all.add(v);
    all.add(encodeURIComponent(v));
  }
  if (all.size === 0) return text;
  const pattern = new RegExp(
    [...all]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'gi',
  );
  return text.replace(pattern, '[…]');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces every occurrence of each secret (raw and URL-encoded) with `[redacted]`. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  const values = new Set<string>();
  for (const s of secrets) {
    if (typeof s !== 'string' || s.length < MIN_SECRET_LENGTH) continue;
    values.add(s);
    values.add(encodeURIComponent(s));
  }
  if (values.size === 0) return text;
  const pattern = new RegExp(
    [...values]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
  return text.replace(pattern, '[redacted]');
}

/** One printable line of at most `max` characters. */
export function oneLine(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
