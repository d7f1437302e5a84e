import type { LookupAddress, LookupAllOptions, lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { AddressPolicy } from './address-policy.js';

/*
 * undici's connect step for page contents: the name is resolved by our own lookup, which refuses
 * every address it resolves to that is not allowed, so the address checked is the address
 * connected to (a name that resolves to a public address when the URL is checked and to a
 * private one when connecting, DNS rebinding, cannot pass). Once connected, the peer's address is
 * checked again before a byte is sent: a literal address skips the lookup, and this keeps the rule
 * whatever path a connection took.
 */

export type Lookup = typeof dnsLookup;

/** A connection refused because the address is not allowed. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'SIFT_BLOCKED_ADDRESS';
  constructor(readonly host: string) {
    super(`${host} resolves to an address that is not public`);
  }
}

type LookupAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A net.connect `lookup` answering only the addresses that `policy` allows on `port`, and refusing
 * the connection when there are none. Dropping the others (rather than refusing a name with any)
 * is as safe, since only what it answers is connected to, and keeps a dual-stack intranet host
 * readable when CONTENTS_ALLOW_HOSTS names one of its families.
 */
function checkedLookup(resolve: Lookup, policy: AddressPolicy, port: number): LookupFunction {
  return (hostname, options, callback) => {
    (resolve as unknown as LookupAll)(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '', 4);
        return;
      }
      const list = (Array.isArray(addresses) ? addresses : []).filter((a) => policy.isAllowed(a.address, port));
      if (list.length === 0) {
        callback(new BlockedAddressError(hostname), '', 4);
        return;
      }
      if (options.all) callback(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

export interface SafeConnectOptions {
  policy: AddressPolicy;
  lookup: Lookup;
  timeoutMs: number;
}

/** An undici `connect` function that connects only to allowed addresses. */
export function safeConnector(options: SafeConnectOptions): buildConnector.connector {
  // One connector per port: the lookup must know the port, which an allowed host entry may name.
  const connectors = new Map<number, buildConnector.connector>();
  function connectorFor(port: number): buildConnector.connector {
    let connector = connectors.get(port);
    if (!connector) {
      connector = buildConnector({
        timeout: options.timeoutMs,
        lookup: checkedLookup(options.lookup, options.policy, port),
      });
      connectors.set(port, connector);
    }
    return connector;
  }
  return (opts, callback) => {
    const port = opts.port ? Number(opts.port) : opts.protocol === 'https:' ? 443 : 80;
    connectorFor(port)(opts, (err, socket) => {
      if (err) {
        callback(err, null);
        return;
      }
      const peer = socket.remoteAddress;
      if (!peer || !options.policy.isAllowed(peer, port)) {
        socket.destroy();
        callback(new BlockedAddressError(opts.hostname), null);
        return;
      }
      callback(null, socket);
    });
  };
}
