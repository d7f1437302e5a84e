/**
 * The local path a `next` parameter names, or null when it is not one:
 * it must start with a single `/` and stay on this site (no `//host`,
 * no backslashes, no control characters, no scheme).
 */
export function localPath(next: unknown): string | null {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2000) return null;
  if (!next.startsWith('/') || next.startsWith('//')) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return null;
  let url: URL;
  try {
    url = new URL(next, 'http://local.invalid');
  } catch {
    return null;
  }
  if (url.origin !== 'http://local.invalid') return null;
  const path = url.pathname + url.search + url.hash;
  if (/^\/(login|logout)\/?$/.test(url.pathname)) return null;
  return path;
}
