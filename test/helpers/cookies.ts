/**
 * Keeps in `jar` what Set-Cookie header lines say, as a browser would: a cookie set to a
 * value is stored, one emptied or expired (Thu, 01 Jan 1970) is forgotten.
 */
export function rememberSetCookies(jar: Map<string, string>, setCookieLines: readonly string[]): void {
  for (const line of setCookieLines) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
}

/** The Cookie request header that sends every cookie in `jar`. */
export const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
