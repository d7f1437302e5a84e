import { isIP } from 'node:net';

/*
 * CONTENTS_ALLOW_HOSTS entries: an address or CIDR, each with an optional port, that page contents
 * may be fetched from although it is private (an intranet, the demo, the tests):
 * `10.0.0.0/8`, `127.0.0.1:8089`, `fd00::/8`, `[::1]:8080`, `[fd00::/8]:8080`. Names are not
 * accepted: what a name resolves to can change, an address cannot.
 */

export interface AllowHost {
  /** The range's first address, as written. */
  address: string;
  family: 'ipv4' | 'ipv6';
  /** The prefix length (32 or 128 for one address). */
  prefix: number;
  /** The one port allowed; undefined: any. */
  port?: number;
}

/** The entry as an AllowHost, or undefined when it is none. */
export function parseAllowHost(entry: string): AllowHost | undefined {
  const text = entry.trim();
  let range = text;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close === -1) return undefined;
    range = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return undefined;
      portText = rest.slice(1);
    }
    // Brackets hold an IPv6 address only.
    if (isIP(range.split('/')[0] ?? '') !== 6) return undefined;
  } else if (text.indexOf(':') === text.lastIndexOf(':') && text.includes(':')) {
    // One colon: an IPv4 address or CIDR and a port (a bare IPv6 address has at least two).
    range = text.slice(0, text.indexOf(':'));
    portText = text.slice(text.indexOf(':') + 1);
  }
  let port: number | undefined;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText)) return undefined;
    port = Number(portText);
    if (port < 1 || port > 65535) return undefined;
  }
  const slash = range.indexOf('/');
  const address = slash === -1 ? range : range.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return undefined;
  const max = family === 6 ? 128 : 32;
  let prefix = max;
  if (slash !== -1) {
    const bits = range.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
    prefix = Number(bits);
  }
  return { address, family: family === 6 ? 'ipv6' : 'ipv4', prefix, ...(port === undefined ? {} : { port }) };
}
