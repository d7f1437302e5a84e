import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/*
 * What one client can hold of a server process's connections (docs/operations.md, Security):
 *
 * - at most `perClient` open connections from one peer address (0: no limit); a new one past it is
 *   closed at once. A peer that is a trusted proxy (TRUST_PROXY) is not limited: its connections
 *   carry many clients, and only what it forwards (X-Forwarded-For) tells them apart, which no
 *   socket count can use; the proxy limits its own clients.
 * - a new connection must send its first byte within `firstByteTimeoutMs`, else it is closed: an
 *   idle socket costs a client nothing and the server one of its connections. Once a request
 *   arrives, Node's requestTimeout / headersTimeout / keepAliveTimeout bound it.
 * - at most `maxConnections` connections serve everything; past them a small reserve
 *   (connectionReserve) still answers liveness and health checks (`/up`, `/status/health…`), so
 *   that a load balancer or monitor does not see a full server as a dead one. A reserve
 *   connection gets one answer, then is closed; any other request on it is a 503. Past the reserve,
 *   a new connection is closed at once.
 */

export interface ConnectionLimits {
  maxConnections: number;
  /** 0: no limit per address. */
  perClient: number;
  firstByteTimeoutMs: number;
  /** Whether the peer at `address` is a trusted proxy (TRUST_PROXY's hop 0). */
  isProxy: (address: string) => boolean;
}

/** Connections kept past MAX_CONNECTIONS for liveness and health checks. */
export function connectionReserve(maxConnections: number): number {
  return Math.min(64, Math.max(4, Math.ceil(maxConnections / 100)));
}

/** Paths a reserve connection is answered on: liveness and the health endpoints. */
export function isCheckPath(url: string | undefined): boolean {
  if (!url) return false;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path === '/up' || path === '/up/' || path === '/status/health' || path.startsWith('/status/health/');
}

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) as the IPv4 address it is. */
function peerAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export interface ConnectionGuard {
  /**
   * Called first for every request: false when the guard has answered it (a request other than a
   * check on a reserve connection). Clears the first-byte timer.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  /** Open connections now (reserve included). */
  open(): number;
}

const REFUSED_BODY = JSON.stringify({ detail: 'The server is at its connection limit: try again shortly.' });

export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  const reserve = connectionReserve(limits.maxConnections);
  const perAddress = new Map<string, number>();
  const inReserve = new WeakSet<Socket>();
  const waitingForFirstByte = new WeakSet<Socket>();
  let open = 0;

  server.on('connection', (socket: Socket) => {
    const address = peerAddress(socket);
    const limited = limits.perClient > 0 && !limits.isProxy(address);
    const held = limited ? (perAddress.get(address) ?? 0) : 0;
    if ((limited && held >= limits.perClient) || open >= limits.maxConnections + reserve) {
      socket.destroy();
      return;
    }
    if (open >= limits.maxConnections) inReserve.add(socket);
    open++;
    if (limited) perAddress.set(address, held + 1);
    socket.once('close', () => {
      open--;
      if (!limited) return;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
    // Node's http server closes a socket whose timeout fires when nothing else handles it.
    waitingForFirstByte.add(socket);
    socket.setTimeout(limits.firstByteTimeoutMs);
  });

  return {
    admit(req, res) {
      const socket = req.socket;
      if (waitingForFirstByte.has(socket)) {
        waitingForFirstByte.delete(socket);
        socket.setTimeout(0);
      }
      if (!inReserve.has(socket)) return true;
      // One answer, then the connection goes back to the reserve.
      res.setHeader('Connection', 'close');
      if (isCheckPath(req.url)) return true;
      res.writeHead(503, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(REFUSED_BODY)),
        'Cache-Control': 'no-store',
        'Retry-After': '1',
      });
      res.end(req.method === 'HEAD' ? undefined : REFUSED_BODY);
      return false;
    },
    open: () => open,
  };
}
