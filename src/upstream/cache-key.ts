import type { ProviderCall, ProviderSlug } from '../providers/types.js';

/*
 * The key of a call's answer in both cache levels, built from the call's own parameters: the
 * provider, the method, the URL's origin and path, its query parameters in a canonical order, and
 * the body (a JSON object's or a form's fields the same way). The credential parameters the
 * provider's descriptor names (`credentialParameters`: Mojeek's `api_key`, Pixabay's `key`) are
 * left out by name, so a key never holds a secret and two calls that differ only by their key
 * share an answer. Headers are not part of it: they carry credentials and fixed values only.
 *
 * Nothing is masked by value: a query that happens to contain a configured key's text (Marginalia's
 * shared key is the word `public`) keys as itself.
 */

/** A call's cache key; `credentials` are the parameter names its provider's descriptor marks as credentials. */
export function callCacheKey(call: ProviderCall<unknown>, credentials: ReadonlySet<string> = NONE): string {
  const { method = 'GET', url, body } = call.request;
  const head = `${call.provider} ${method} ${canonicalUrl(url, credentials)}`;
  return body === undefined ? head : `${head} ${canonicalBody(body, credentials)}`;
}

/** The key of a flow's final value: the adapter's own key, made of the flow's parameters. */
export function flowCacheKey(provider: ProviderSlug, key: string): string {
  return `${provider} flow ${key}`;
}

/** The key of a flow's memo (a login token): kept in its process only. */
export function memoCacheKey(provider: ProviderSlug, key: string): string {
  return `${provider} memo ${key}`;
}

const NONE: ReadonlySet<string> = new Set();

function canonicalUrl(url: string, credentials: ReadonlySet<string>): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  const query = canonicalParams(u.searchParams, credentials);
  return `${u.origin}${u.pathname}${query ? `?${query}` : ''}`;
}

/** Parameters sorted by name (the order of a repeated name's values kept), credentials left out. */
function canonicalParams(params: URLSearchParams, credentials: ReadonlySet<string>): string {
  const kept: [string, string][] = [];
  for (const [name, value] of params) if (!credentials.has(name)) kept.push([name, value]);
  kept.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return kept.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join('&');
}

function canonicalBody(body: string, credentials: ReadonlySet<string>): string {
  const start = body.trimStart()[0];
  if (start === '{') {
    try {
      return canonicalJson(JSON.parse(body), credentials);
    } catch {
      return body;
    }
  }
  if (credentials.size > 0 && /^[^=&\s{["]+=/.test(body))
    return canonicalParams(new URLSearchParams(body), credentials);
  return body;
}

/** JSON with object keys sorted and the top level's credential fields left out. */
function canonicalJson(value: unknown, credentials: ReadonlySet<string>, depth = 0): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, NONE, depth + 1)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const names = Object.keys(record)
    .filter((k) => depth > 0 || !credentials.has(k))
    .sort();
  return `{${names.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k], NONE, depth + 1)}`).join(',')}}`;
}
