import type { IncomingMessage, ServerResponse } from 'node:http';

/** `/up` and `/up/`, whatever the query string. */
export function isUpPath(url: string | undefined): boolean {
  if (!url) return false;
  const q = url.indexOf('?');
  const p = q < 0 ? url : url.slice(0, q);
  return p === '/up' || p === '/up/';
}

/** Liveness: 200 `OK` as text/plain, for any method, with no database, auth or host check. */
export function answerUp(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': '2',
    'Cache-Control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : 'OK');
}
