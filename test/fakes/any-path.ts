import type { FakeHandler, FakeReply } from './fake-server.js';

/*
 * A route table for startFakeServer() that sends every request to one
 * handler, for upstreams whose paths carry values (/movies/{id}/extended,
 * /api/rest_v1/page/summary/{title}, /{lang}/w/api.php…).
 */
export function anyPath(handler: FakeHandler): Record<string, FakeHandler> {
  return new Proxy({} as Record<string, FakeHandler>, {
    get: (_target, key) => (typeof key === 'string' ? handler : undefined),
  });
}

/** A JSON 404 with the path (for paths a fake does not serve). */
export function notFound(path: string): FakeReply {
  return { status: 404, body: { error: 'not found', path } };
}
