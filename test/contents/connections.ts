import dc from 'node:diagnostics_channel';
import type { LookupAddress } from 'node:dns';
import type { Socket } from 'node:net';
import type { Lookup } from '../../src/contents/fetch/safe-connect.js';

/*
 * Helpers of the contents fetch tests: a watch over every TCP connection this process attempts
 * (through the platform's `net.client.socket` diagnostics channel), to prove a refused fetch never
 * tried to reach its address; and a stub resolver answering chosen addresses for chosen names, so
 * addresses off this machine are checked without sending them anything.
 */

export interface ConnectionWatch {
  /** Connection attempts (a TCP connect to an address) seen since the watch began. */
  attempts: { address: string; port: number }[];
  stop(): void;
}

export function watchConnections(): ConnectionWatch {
  const watch: ConnectionWatch = {
    attempts: [],
    stop: () => dc.unsubscribe('net.client.socket', onSocket),
  };
  function onSocket(message: unknown) {
    const socket = (message as { socket: Socket }).socket;
    socket.on('connectionAttempt', (address: string, port: number) => watch.attempts.push({ address, port }));
  }
  dc.subscribe('net.client.socket', onSocket);
  return watch;
}

/** A dns.lookup stand-in: `names` maps a host name to its addresses; others do not resolve. */
export function stubLookup(names: Record<string, string[]>): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    const cb = typeof options === 'function' ? (options as typeof callback) : callback;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    asked.push(hostname);
    const addresses = names[hostname];
    setImmediate(() => {
      if (!addresses) {
        cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }));
        return;
      }
      const list: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      if (all) cb(null, list);
      else cb(null, list[0]!.address, list[0]!.family);
    });
  };
  return Object.assign(lookup as unknown as Lookup, { asked });
}
