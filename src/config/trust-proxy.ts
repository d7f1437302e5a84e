import { BlockList, isIP } from 'node:net';

/*
 * TRUST_PROXY, as the function of (address, hop) that Fastify's `trustProxy` option takes: each
 * documented form means what docs/operations.md (Security) says, whatever Fastify reads into a
 * bare number or string (Fastify 5 reads a bare hop count as "trust nothing"). Hop 0 is the peer
 * of the socket; hop 1 the last X-Forwarded-For entry, and so on; the client is the first address
 * not trusted.
 * - `true`: every hop is a proxy (the client is the first X-Forwarded-For entry).
 * - a hop count N: the N nearest hops are proxies, provided the nearest is on a loopback, link-local
 *   or private address (as a proxy on the same host or network is). A client reaching Sift directly
 *   from a public address can thus not choose its own; a proxy on a public address (some cloud load
 *   balancers) must be named by its address instead.
 * - addresses and CIDRs (`10.0.0.0/8, ::1`), and the names `loopback`, `linklocal`, `uniquelocal`:
 *   any hop from one of them is a proxy.
 */

export type TrustProxySetting = boolean | number | string;
export type TrustProxyFunction = (address: string, hop: number) => boolean;

/** The ranges of the names accepted in an address list (those of Express and proxy-addr). */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Where a proxy counted by a hop count may be: on this host or a private network. */
const NEARBY = [...NAMED_RANGES.loopback!, ...NAMED_RANGES.linklocal!, ...NAMED_RANGES.uniquelocal!];

/** A BlockList of the entries of an address list, or the first entry that is none. */
export function parseAddressList(value: string): { list: BlockList } | { invalid: string } {
  const list = new BlockList();
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) return { invalid: value };
  for (const entry of entries) {
    const ranges = NAMED_RANGES[entry.toLowerCase()] ?? [entry];
    for (const range of ranges) if (!addRange(list, range)) return { invalid: entry };
  }
  return { list };
}

function addRange(list: BlockList, range: string): boolean {
  const slash = range.indexOf('/');
  const address = slash === -1 ? range : range.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (slash === -1) {
    list.addAddress(address, type);
    return true;
  }
  const prefix = range.slice(slash + 1);
  const max = family === 6 ? 128 : 32;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return false;
  list.addSubnet(address, Number(prefix), type);
  return true;
}

/** Whether `address` (as a socket or X-Forwarded-For gives it) is in `list`; anything not an address is not. */
function contains(list: BlockList, address: unknown): boolean {
  if (typeof address !== 'string') return false;
  const family = isIP(address);
  // BlockList matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against IPv4 ranges too.
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Fastify's `trustProxy` for a TRUST_PROXY value (as the config schema gives it): false or a function. */
export function proxyTrust(setting: TrustProxySetting): false | TrustProxyFunction {
  if (setting === false || setting === 0) return false;
  if (setting === true) return () => true;
  if (typeof setting === 'number') {
    const hops = setting;
    const nearby = (parseAddressList(NEARBY.join(',')) as { list: BlockList }).list;
    return (address, hop) => hop < hops && (hop > 0 || contains(nearby, address));
  }
  const parsed = parseAddressList(setting);
  if ('invalid' in parsed) throw new Error(`TRUST_PROXY: not an address or CIDR: "${parsed.invalid}"`);
  const { list } = parsed;
  return (address) => contains(list, address);
}
