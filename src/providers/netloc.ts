/*
 * The network location of a URL as Python's urllib.parse.urlsplit gives it:
 * whatever sits between "//" and the next "/", "?" or "#", unchanged (case,
 * port, "www." and Unicode kept); "" when the URL has no authority part.
 */
const AUTHORITY = /^(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/([^/?#]*)/;

export function netloc(url: string): string {
  const m = AUTHORITY.exec(url);
  return m ? m[1]! : '';
}
