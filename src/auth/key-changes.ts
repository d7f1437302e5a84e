import pg from 'pg';
import { withQueryTimeout } from '../db/pool.js';

/*
 * Keeps an instance's API-key cache in step with the database: a change that
 * can make a cached row wrong (a key revoked or deleted, a user disabled,
 * renamed or deleted) is announced on the `sift_auth` channel by triggers
 * (migrations/0013_baseline.sql), whoever makes it: this instance, another
 * one, the CLI or plain SQL. The payload is a key's prefix, or `*` for a user
 * change, which drops every cached key.
 *
 * One dedicated connection per instance LISTENs. When it is lost (the
 * database restarted, the network cut), it is opened again with a growing
 * pause, and every cached key is dropped once it listens again, since
 * changes made meanwhile were not heard. A connection that stops answering
 * is noticed by a ping every PING_INTERVAL_MS. While nobody listens, cached
 * rows still expire at the end of their cache life (api-key-auth.ts).
 */

export const AUTH_CHANNEL = 'sift_auth';
const PING_INTERVAL_MS = 15_000;
const PING_TIMEOUT_MS = 5_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/** What the listener drops entries of. */
export interface KeyCacheControl {
  forget(prefix: string): void;
  forgetAll(): void;
}

export interface KeyChangeListener {
  /** Whether the channel is listened to right now. */
  readonly listening: boolean;
  /** Stops listening and closes the connection (and any being opened). */
  close(): Promise<void>;
}

export interface KeyChangeOptions {
  log?: { warn(obj: unknown, msg?: string): void };
  /** First pause before opening a lost connection again (doubles up to 30 s). */
  retryMs?: number;
}

export function listenForKeyChanges(
  pool: pg.Pool,
  cache: KeyCacheControl,
  options: KeyChangeOptions = {},
): KeyChangeListener {
  const firstRetry = options.retryMs ?? FIRST_RETRY_MS;
  const config: pg.ClientConfig = { ...pool.options, application_name: `sift:${process.pid}:auth-listener` };
  const clients = new Set<pg.Client>();
  let current: { client: pg.Client; drop: (err: unknown) => void } | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let pause = firstRetry;

  function onNotification(message: pg.Notification): void {
    if (message.channel !== AUTH_CHANNEL) return;
    const payload = message.payload ?? '*';
    if (payload === '*') cache.forgetAll();
    else cache.forget(payload);
  }

  function open(): void {
    retry = undefined;
    if (closed) return;
    const client = new pg.Client(config);
    clients.add(client);
    let gone = false;
    const drop = (err: unknown): void => {
      if (gone) return;
      gone = true;
      if (current?.client === client) current = null;
      client.end().catch(() => undefined);
      clients.delete(client);
      if (closed) return;
      options.log?.warn({ err }, 'API-key change notifications lost; listening again shortly');
      retry = setTimeout(open, pause);
      retry.unref();
      pause = Math.min(pause * 2, MAX_RETRY_MS);
    };
    client.on('error', drop);
    client.on('end', () => drop(new Error('connection closed')));
    client.on('notification', (message) => {
      if (!gone) onNotification(message);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${AUTH_CHANNEL}`))
      .then(() => {
        if (gone || closed) return;
        current = { client, drop };
        pause = firstRetry;
        // Changes made while nobody listened were not heard.
        cache.forgetAll();
      }, drop);
  }

  const ping = setInterval(() => {
    const listening = current;
    if (!listening) return;
    listening.client.query(withQueryTimeout({ text: 'SELECT 1' }, PING_TIMEOUT_MS)).catch(listening.drop);
  }, PING_INTERVAL_MS);
  ping.unref();

  open();

  return {
    get listening() {
      return current !== null;
    },
    async close() {
      closed = true;
      clearInterval(ping);
      if (retry) clearTimeout(retry);
      current = null;
      await Promise.all([...clients].map((client) => client.end().catch(() => undefined)));
      clients.clear();
    },
  };
}
