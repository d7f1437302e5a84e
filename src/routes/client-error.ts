import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/*
 * Requests node's HTTP parser refuses before Fastify sees them (a malformed
 * request line or header, a NUL or control character, conflicting
 * Content-Length / Transfer-Encoding, a bad chunk, headers over 16 KB) get
 * the same kind of answer as every other client error: JSON with a `detail`
 * a person can act on, then the connection is closed (the stream cannot be
 * trusted past the error). Fastify's default says only "Client Error".
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let detail = 'Malformed HTTP request.';
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    detail = 'The request line and headers are too large.';
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    detail = 'The request took too long to arrive.';
  }
  const body = JSON.stringify({ detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
