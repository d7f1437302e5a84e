import { type Socket, connect } from 'node:net';

/** A raw TCP connection to the server at `base` (http://host:port), once connected. */
export function openSocket(base: string): Promise<Socket> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * How a raw connection ended: what the server wrote before it closed (`text`), and whether it was
 * reset (`reset`) instead of closed.
 */
export interface SocketEnd {
  text: string;
  reset: boolean;
}

/** Collects what the server writes on `socket` until it closes or resets it. */
export function readUntilClosed(socket: Socket): Promise<SocketEnd> {
  return new Promise((resolve) => {
    let text = '';
    let reset = false;
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', () => (reset = true));
    socket.on('close', () => resolve({ text, reset }));
  });
}

/** Sends `raw` (a whole request, as bytes on the wire) on a new connection and reads until the server closes it. */
export async function rawRequest(base: string, raw: string): Promise<SocketEnd> {
  const socket = await openSocket(base);
  const ended = readUntilClosed(socket);
  socket.write(raw);
  return ended;
}

/** The status code of the first response in `text`, or 0 when there is none. */
export function statusOf(text: string): number {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  return m ? Number(m[1]) : 0;
}
