import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AllFakes } from './all.js';
import type { FaultMode } from './fake-server.js';

/*
 * The demo's fault control (`npm run demo`, docs/demo.md): a small HTTP
 * server on 127.0.0.1 only that switches a provider's fake upstream into a
 * failure and back, so that the status page, /metrics and the alert webhooks
 * can be watched reacting to an outage.
 *
 *   GET  /providers                          every provider and how its fake answers
 *   POST /providers/<slug>/fail[?mode=…]     error (503, the default), timeout, reset or garbage
 *   POST /providers/<slug>/restore           answers normally again
 *
 * Nothing of Sift itself is touched: the provider fails as a real upstream
 * would, and Sift notices it on its next search or probe.
 *
 * Only a local client may use it: a request must name the control itself as its Host
 * (127.0.0.1:<port> or localhost:<port>; a DNS-rebound name is refused) and carry no Origin
 * (a browser sends one with every cross-site POST and fetch; curl sends none). Both refusals are 403.
 */

/** The failures the control offers, as the fakes' fault modes. */
export const FAILURES = {
  error: { kind: 'status', status: 503, body: { error: 'service unavailable (demo outage)' } },
  timeout: { kind: 'hang' },
  reset: { kind: 'reset' },
  garbage: { kind: 'garbage' },
} as const satisfies Record<string, FaultMode>;

export type Failure = keyof typeof FAILURES;

export function isFailure(word: string): word is Failure {
  return Object.hasOwn(FAILURES, word);
}

export interface FaultControl {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The state of each provider: `ok` or the failure it is in. */
  states(): Record<string, Failure | 'ok'>;
  fail(slug: string, failure?: Failure): void;
  restore(slug: string): void;
  close(): Promise<void>;
}

/** Starts the control over the fakes on 127.0.0.1:`port` (0: any free port). */
export async function startFaultControl(fakes: AllFakes, port = 0): Promise<FaultControl> {
  const states = new Map<string, Failure | 'ok'>(fakes.providers.map((p) => [p.slug, 'ok']));
  const serverOf = (slug: string) => {
    const fake = fakes.providers.find((p) => p.slug === slug);
    if (!fake) throw new Error(`no provider "${slug}"`);
    return fake.server;
  };

  const control: Omit<FaultControl, 'url' | 'close'> = {
    states: () => Object.fromEntries(states),
    fail(slug, failure = 'error') {
      serverOf(slug).setMode(FAILURES[failure]);
      states.set(slug, failure);
    },
    restore(slug) {
      serverOf(slug).setMode({ kind: 'normal' });
      states.set(slug, 'ok');
    },
  };

  const server = createServer((req, res) => {
    req.resume();
    handle(req, res);
  });

  function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(`${JSON.stringify(body)}\n`);
  }

  /** The Host values that name this control (its port is known once it listens). */
  let ownHosts = new Set<string>();

  function handle(req: IncomingMessage, res: ServerResponse) {
    if (!ownHosts.has(String(req.headers.host ?? '').toLowerCase())) {
      return reply(res, 403, { error: 'the control answers requests to its own address only (Host)' });
    }
    if (req.headers.origin !== undefined) {
      return reply(res, 403, { error: 'the control refuses requests from web pages (Origin)' });
    }
    const url = new URL(req.url ?? '/', 'http://control');
    if (url.pathname === '/providers' || url.pathname === '/providers/') {
      if (req.method !== 'GET') return reply(res, 405, { error: 'use GET' }, { allow: 'GET' });
      return reply(res, 200, { providers: control.states() });
    }
    const match = /^\/providers\/([^/]+)\/(fail|restore)\/?$/.exec(url.pathname);
    if (!match)
      return reply(res, 404, { error: 'not found', see: 'GET /providers, POST /providers/<slug>/fail|restore' });
    if (req.method !== 'POST') return reply(res, 405, { error: 'use POST' }, { allow: 'POST' });
    const [, slug, action] = match as unknown as [string, string, 'fail' | 'restore'];
    if (!states.has(slug)) return reply(res, 404, { error: `no provider "${slug}"`, providers: [...states.keys()] });
    if (action === 'restore') {
      control.restore(slug);
      return reply(res, 200, { provider: slug, state: 'ok' });
    }
    const mode = url.searchParams.get('mode') ?? 'error';
    if (!isFailure(mode)) return reply(res, 400, { error: `mode must be one of ${Object.keys(FAILURES).join(', ')}` });
    control.fail(slug, mode);
    return reply(res, 200, { provider: slug, state: mode });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const listening = (server.address() as AddressInfo).port;
  ownHosts = new Set([`127.0.0.1:${listening}`, `localhost:${listening}`]);
  return {
    ...control,
    url: `http://127.0.0.1:${listening}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
