import { BlockList, isIP } from 'node:net';
import { type AllowHost, parseAllowHost } from '../../config/allow-hosts.js';

/*
 * Which addresses page contents may be fetched from: every address but those that are not
 * globally reachable (IANA's IPv4 and IPv6 special-purpose address registries, with multicast and
 * the reserved blocks), unless CONTENTS_ALLOW_HOSTS names it (with its port, when one is given).
 * IPv6 addresses that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are blocked wherever the
 * IPv4 address is, so no spelling of a private address passes. The platform's BlockList does the
 * matching.
 */

export interface AddressPolicy {
  /** Whether a connection to `address` (IPv4 or IPv6, brackets and zone allowed) on `port` may be made. */
  isAllowed(address: string, port: number): boolean;
}

/** IPv4 ranges that are not globally reachable, or not unicast. */
const BLOCKED_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 itself included
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (Alibaba Cloud's metadata service is in it)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, the cloud metadata address 169.254.169.254 included
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (Oracle Cloud's metadata service is in it)
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, the broadcast address 255.255.255.255 included
];

/** IPv6 ranges that are not globally reachable, or not unicast. */
const BLOCKED_V6: readonly [string, number][] = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // SRv6 segment identifiers
  ['fc00::', 7], // unique local (AWS's IPv6 metadata address fd00:ec2::254 included)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];

/** IPv6 prefixes whose addresses carry an IPv4 address right after the prefix. */
const IPV4_CARRIERS: readonly { groups: readonly string[]; bits: number }[] = [
  { groups: ['0', '0', '0', '0', '0', 'ffff'], bits: 96 }, // IPv4-mapped ::ffff:0:0/96
  { groups: ['64', 'ff9b', '0', '0', '0', '0'], bits: 96 }, // NAT64 well-known prefix 64:ff9b::/96
  { groups: ['2002'], bits: 16 }, // 6to4 2002::/16
];

function blockedRanges(): BlockList {
  const list = new BlockList();
  for (const [address, prefix] of BLOCKED_V4) {
    list.addSubnet(address, prefix, 'ipv4');
    const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
    const high = ((a << 8) | b).toString(16);
    const low = ((c << 8) | d).toString(16);
    for (const carrier of IPV4_CARRIERS) {
      const groups = [...carrier.groups, high, low];
      const net = groups.length === 8 ? groups.join(':') : `${groups.join(':')}::`;
      list.addSubnet(net, carrier.bits + prefix, 'ipv6');
    }
  }
  for (const [address, prefix] of BLOCKED_V6) list.addSubnet(address, prefix, 'ipv6');
  return list;
}

const BLOCKED = blockedRanges();

/** The address without brackets or zone, and its family; undefined for anything that is no address. */
function addressOf(text: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  let address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  const family = isIP(address);
  if (family === 0) return undefined;
  return { address, family: family === 6 ? 'ipv6' : 'ipv4' };
}

/**
 * The policy for a CONTENTS_ALLOW_HOSTS list (entries as `parseAllowHost` reads them). Throws on an
 * entry that is no address or CIDR: the configuration schema has refused those already.
 */
export function addressPolicy(allowHosts: readonly string[]): AddressPolicy {
  const allowed = allowHosts.map((entry) => {
    const host: AllowHost | undefined = parseAllowHost(entry);
    if (!host) throw new Error(`CONTENTS_ALLOW_HOSTS: not an address or CIDR with an optional port: "${entry}"`);
    const list = new BlockList();
    list.addSubnet(host.address, host.prefix, host.family);
    return { list, port: host.port };
  });
  return {
    isAllowed(text, port) {
      const parsed = addressOf(text);
      if (!parsed) return false;
      for (const entry of allowed) {
        if ((entry.port === undefined || entry.port === port) && entry.list.check(parsed.address, parsed.family)) {
          return true;
        }
      }
      return !BLOCKED.check(parsed.address, parsed.family);
    },
  };
}
