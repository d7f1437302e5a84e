import net from 'node:net';

/*
 * A TCP proxy on 127.0.0.1 between the app's pool and the real PostgreSQL,
 * to build database outages while the server runs:
 *
 *   const proxy = await startDbProxy(db.url);
 *   const pool = createPool(proxy.url);          // the app talks through it
 *   await proxy.setMode('refuse');               // outage …
 *   await proxy.setMode('pass');                 // … and back
 *
 * Modes:
 *   pass       forwards both ways.
 *   refuse     the database is down: the port is closed (new connections get
 *              ECONNREFUSED) and every open connection is closed.
 *   reset      the connection breaks mid-query: each connection forwards the
 *              next chunk the app sends to PostgreSQL (so a statement does
 *              reach the server), then resets the app's side (RST) and closes
 *              PostgreSQL's; an answer from PostgreSQL is never delivered (the
 *              connection is reset instead). New connections are accepted and
 *              reset the same way. With `after`, chunks pass through until
 *              one matches (e.g. /COMMIT/): that one is forwarded, then the cut.
 *   blackhole  a network partition: connections are accepted and never
 *              answered, nothing is forwarded either way, and a side that
 *              closes is not told to the other. When the partition heals
 *              (another mode), every connection that lived through it is
 *              broken (its stream lost data): both sides are reset. With
 *              `after`, traffic passes until an app chunk matches; that chunk
 *              is delivered to PostgreSQL (`deliver`, its answer is lost) or
 *              swallowed, and the partition begins there.
 *
 * `setDelay(ms)` holds each chunk the app sends for `ms` before it reaches
 * PostgreSQL (a slow way there: a process whose statements lag), in any mode
 * that forwards; chunks of one connection keep their order.
 */

export type DbProxyMode = 'pass' | 'refuse' | 'reset' | 'blackhole';

export interface DbProxyModeOptions {
  /**
   * reset: cut each connection after forwarding an app chunk whose text matches (default: any chunk).
   * blackhole: pass traffic until an app chunk matches, then begin the partition.
   */
  after?: RegExp;
  /** blackhole with `after`: deliver the matching chunk to PostgreSQL (default: swallow it). */
  deliver?: boolean;
}

export interface DbProxyStats {
  /** Connections accepted (all modes). */
  accepted: number;
  /** Connections reset by the `reset` mode. */
  resets: number;
  /** Printable text of each app chunk forwarded to PostgreSQL just before its connection was cut. */
  cutAfter: string[];
  /** Printable text of the chunk that began a black hole armed with `after`. */
  partitionAt: string[];
  /** Chunks swallowed by the black hole. */
  dropped: number;
}

export interface DbProxy {
  /** `targetUrl` with host and port replaced by the proxy's. */
  readonly url: string;
  readonly port: number;
  readonly mode: DbProxyMode;
  readonly stats: DbProxyStats;
  /** Connections currently open on the app's side. */
  openConnections(): number;
  setMode(mode: DbProxyMode, options?: DbProxyModeOptions): Promise<void>;
  /** Holds what the app sends for `ms` before forwarding it (0: at once). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

interface Pair {
  app: net.Socket;
  db: net.Socket | null;
  /** Lived through a black hole: data was lost, it must never carry traffic again. */
  broken: boolean;
  cut: boolean;
  /** Chunks held by the delay, in the order the app sent them. */
  held: { due: number; chunk: Buffer }[];
}

/** The printable part of a protocol chunk (query text, names), for assertions and messages. */
function printable(chunk: Buffer): string {
  return chunk
    .toString('latin1')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
}

export async function startDbProxy(targetUrl: string): Promise<DbProxy> {
  const target = new URL(targetUrl);
  const targetHost = target.hostname;
  const targetPort = Number(target.port || 5432);
  const pairs = new Set<Pair>();
  const stats: DbProxyStats = { accepted: 0, resets: 0, cutAfter: [], partitionAt: [], dropped: 0 };
  let mode: DbProxyMode = 'pass';
  /** reset: which app chunks cut their connection (undefined: any). */
  let cutAfter: RegExp | undefined;
  /** blackhole armed with `after`: traffic passes until the trigger. */
  let armed: { after: RegExp; deliver: boolean } | null = null;
  /** No data may flow in this state (new connections are born broken). */
  const partitioned = () => mode === 'blackhole' && !armed;
  let server: net.Server | null = null;
  let port = 0;
  let delayMs = 0;

  function destroyPair(pair: Pair, reset: boolean) {
    pairs.delete(pair);
    if (reset && !pair.app.destroyed) pair.app.resetAndDestroy();
    else pair.app.destroy();
    pair.db?.destroy();
  }

  /** Breaks the connection after PostgreSQL got what was written to it: RST to the app, FIN to PostgreSQL. */
  function cut(pair: Pair) {
    if (pair.cut) return;
    pair.cut = true;
    stats.resets++;
    pairs.delete(pair);
    if (!pair.app.destroyed) pair.app.resetAndDestroy();
    pair.db?.end();
  }

  function onAppData(pair: Pair, chunk: Buffer) {
    if (pair.cut) return;
    if (armed && !pair.broken && pair.db && armed.after.test(chunk.toString('latin1'))) {
      stats.partitionAt.push(printable(chunk));
      if (armed.deliver) pair.db.write(chunk);
      else stats.dropped++;
      armed = null;
      for (const p of pairs) p.broken = true;
      return;
    }
    if (pair.broken || partitioned() || mode === 'refuse' || !pair.db) {
      stats.dropped++;
      return;
    }
    if (mode === 'reset' && (!cutAfter || cutAfter.test(chunk.toString('latin1')))) {
      stats.cutAfter.push(printable(chunk));
      pair.cut = true;
      const db = pair.db;
      db.write(chunk, () => {
        pair.cut = false;
        cut(pair);
      });
      return;
    }
    forward(pair, pair.db, chunk);
  }

  /** Writes an app chunk to PostgreSQL after the delay, in order behind the connection's held chunks. */
  function forward(pair: Pair, db: net.Socket, chunk: Buffer) {
    if (delayMs <= 0 && pair.held.length === 0) {
      db.write(chunk);
      return;
    }
    pair.held.push({ due: performance.now() + delayMs, chunk });
    if (pair.held.length === 1) release(pair, db);
  }

  /** Forwards the held chunks that are due, oldest first, and waits for the next one. */
  function release(pair: Pair, db: net.Socket) {
    const now = performance.now();
    while (pair.held.length > 0 && pair.held[0]!.due <= now) {
      const { chunk } = pair.held.shift()!;
      if (!pair.cut && !pair.broken && !db.destroyed) db.write(chunk);
    }
    if (pair.held.length > 0) setTimeout(() => release(pair, db), Math.max(1, pair.held[0]!.due - now));
  }

  function onDbData(pair: Pair, chunk: Buffer) {
    if (pair.cut) return;
    if (pair.broken || partitioned() || mode === 'refuse') {
      stats.dropped++;
      return;
    }
    if (mode === 'reset' && !cutAfter) {
      // The answer is lost: the app sees its connection reset mid-query.
      cut(pair);
      return;
    }
    pair.app.write(chunk);
  }

  function onConnection(app: net.Socket) {
    stats.accepted++;
    app.on('error', () => {});
    const pair: Pair = { app, db: null, broken: partitioned(), cut: false, held: [] };
    pairs.add(pair);
    if (!pair.broken) {
      const db = net.connect({ host: targetHost, port: targetPort });
      db.on('error', () => {});
      db.setNoDelay(true);
      pair.db = db;
      db.on('data', (chunk: Buffer) => onDbData(pair, chunk));
      db.on('close', () => {
        if (pair.broken || pair.cut) return;
        pairs.delete(pair);
        app.destroy();
      });
    }
    app.setNoDelay(true);
    app.on('data', (chunk: Buffer) => onAppData(pair, chunk));
    app.on('close', () => {
      // Across a partition, the other side never learns of the close (until the partition heals).
      if (pair.broken || pair.cut) return;
      pairs.delete(pair);
      pair.db?.destroy();
    });
  }

  async function openListener(): Promise<void> {
    const srv = net.createServer(onConnection);
    srv.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => {
        srv.off('error', reject);
        resolve();
      });
    });
    port = (srv.address() as net.AddressInfo).port;
    server = srv;
  }

  function closeListener() {
    // Stops accepting at once; open connections are dealt with by the caller.
    server?.close();
    server = null;
  }

  await openListener();
  const proxied = new URL(targetUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);

  return {
    url: proxied.toString(),
    port,
    get mode() {
      return mode;
    },
    stats,
    openConnections: () => pairs.size,
    async setMode(next, options = {}) {
      const previous = mode;
      mode = next;
      cutAfter = next === 'reset' ? options.after : undefined;
      armed =
        next === 'blackhole' && options.after ? { after: options.after, deliver: options.deliver === true } : null;
      if (previous === 'blackhole' && next !== 'blackhole') {
        // The partition heals: connections that lost data are reset on both sides.
        for (const pair of [...pairs]) if (pair.broken) destroyPair(pair, true);
      }
      if (partitioned()) {
        for (const pair of pairs) pair.broken = true;
      }
      if (next === 'refuse') {
        closeListener();
        for (const pair of [...pairs]) destroyPair(pair, false);
      } else if (!server) {
        await openListener();
      }
    },
    setDelay(ms) {
      delayMs = ms;
    },
    async close() {
      mode = 'refuse';
      closeListener();
      for (const pair of [...pairs]) destroyPair(pair, false);
    },
  };
}
