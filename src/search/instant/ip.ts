import { isIP } from 'node:net';
import { phraseSet } from './text.js';
import type { InstantHandler } from './types.js';
import { IP_VOCABULARY } from './vocabulary.js';

/*
 * `ip`: the client's address as the app sees it. `request.ip` is resolved by
 * Fastify according to TRUST_PROXY (src/app.ts): with TRUST_PROXY unset the
 * socket's peer address, never a client-supplied X-Forwarded-For; behind a
 * trusted proxy, the client address it reports. Fields: `ip` ("Unavailable"
 * when none), `user_agent`, `is_local` (loopback, private, link-local, unique-local).
 */

const isTrigger = phraseSet(Object.values(IP_VOCABULARY).flatMap((v) => v.phrases));

/** An address without an IPv4-mapped prefix or zone index; "" when it is not an IP address. */
export function normaliseIp(raw: string): string {
  let ip = raw.trim();
  if (ip.startsWith('[') && ip.includes(']')) ip = ip.slice(1, ip.indexOf(']'));
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  if (!isIP(ip)) return '';
  return isIP(ip) === 6 ? ip.toLowerCase() : ip;
}

function ipv4Octets(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** Expands an IPv6 address to its eight 16-bit groups. */
function ipv6Groups(ip: string): number[] {
  let s = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Octets(v4[1]!);
    s = s.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => Number.parseInt(g, 16));
}

/** Loopback, private (RFC 1918, unique-local), link-local, unspecified or CGNAT shared space. */
export function isLocalIp(ip: string): boolean {
  const kind = isIP(ip);
  if (kind === 4) {
    const [a = 0, b = 0] = ipv4Octets(ip);
    return (
      a === 127 ||
      a === 10 ||
      a === 0 ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (kind === 6) {
    const g = ipv6Groups(ip);
    const first = g[0] ?? 0;
    if (g.every((x, i) => (i < 7 ? x === 0 : x === 0 || x === 1))) return true; // :: and ::1
    if ((first & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
    if ((first & 0xffc0) === 0xfe80) return true; // fe80::/10 link local
    return false;
  }
  return false;
}

export const ipHandler: InstantHandler = {
  type: 'ip',
  async answer(ctx) {
    if (!isTrigger(ctx.text)) return null;
    const ip = normaliseIp(ctx.ip);
    return { ip: ip || 'Unavailable', user_agent: ctx.userAgent, is_local: ip ? isLocalIp(ip) : false };
  },
};
