const BASE = 'http://local.invalid';

/** Whether a path starts with one `/` and no second one or backslash (which browsers read as a host). */
function singleSlash(path: string): boolean {
  return path.startsWith('/') && path[1] !== '/' && path[1] !== '\\';
}

/**
 * The local path a `next` parameter names, or null when it is not one. The path is checked as
 * resolved, which is also what the redirect sends: `/.//host` and `/..//host` resolve to `//host`,
 * which a browser reads as another site, so the resolved path must start with a single `/` too.
 * No backslashes or control characters anywhere (URL parsing turns `\` into `/` and drops tabs),
 * no scheme, and never the sign-in or sign-out page itself. Percent-encoded slashes stay encoded
 * (`/%2F%2Fhost` is a path on this site, as browsers read it).
 */
export function localPath(next: unknown): string | null {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2000) return null;
  if (!singleSlash(next)) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return null;
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE) return null;
  const path = url.pathname + url.search + url.hash;
  if (!singleSlash(path)) return null;
  if (/^\/(login|logout)\/?$/.test(url.pathname)) return null;
  return path;
}
