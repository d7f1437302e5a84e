import http from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A webhook receiver on 127.0.0.1 that records every request (method, path,
 * query, headers, body) and answers as scripted: the statuses given first,
 * then 200 (or the receiver's own `answer`). Stands in for Slack, Discord,
 * ntfy, Gotify, Uptime Kuma or a generic JSON endpoint.
 */

export interface ReceivedRequest {
  at: number;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** The raw body. */
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: Record<string, unknown> & { changes?: Record<string, unknown>[] };
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port> */
  origin: string;
  received: ReceivedRequest[];
  /** Answers with these statuses first (then 200); 'hang' never answers. */
  script(statuses: (number | 'hang')[]): void;
  /** Requests held unanswered ('hang') whose sender is still connected (it has not given up). */
  hanging(): number;
  reset(): void;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** The 2xx answer (status, content type, body); default 200 text "ok". */
  answer?: (req: ReceivedRequest) => { status: number; contentType: string; body: string };
}

function parsed(text: string): ReceivedRequest['body'] {
  try {
    return JSON.parse(text);
  } catch {
    return undefined as unknown as ReceivedRequest['body'];
  }
}

export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  let script: (number | 'hang')[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://receiver');
      const request: ReceivedRequest = {
        at: Date.now(),
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        text,
        body: parsed(text),
      };
      received.push(request);
      const next = script.shift() ?? 200;
      if (next === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const answer =
        next === 200 && options.answer
          ? options.answer(request)
          : { status: next, contentType: 'text/plain', body: 'ok' };
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    script(statuses) {
      script = [...statuses];
    },
    hanging: () => hanging.size,
    reset() {
      received.length = 0;
      script = [];
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
