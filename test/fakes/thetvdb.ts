import { anyPath, notFound } from './any-path.js';
import { type FakeReply, type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake TheTVDB v4 (upstreams.md section 9), THETVDB_BASE_URL = `${url}/v4`:
 * - POST /v4/login {"apikey", "pin"?} -> {"status": "success", "data": {"token"}}
 *   (a wrong key: 401 {"status": "failure", "message": "Unauthorized", "data": null}).
 * - GET /v4/search?query=&limit= (Bearer token) -> {"status": "success", "data": [hits],
 *   "links": {...}}: the records whose name contains the query or is
 *   contained in it (case-insensitive), people too.
 * - GET /v4/{movies|series}/{id}/extended?meta=translations -> {"status": "success", "data": {...}}
 * A token stops working after expireTokens() (401 on its next use), as a
 * revoked token does.
 */

export interface FakeTvdbRecord {
  tvdb_id: string;
  type: 'movie' | 'series' | 'person';
  name: string;
  slug: string;
  year?: string;
  aliases?: string[];
  translations?: Record<string, string>;
  /** The data of /{movies|series}/{id}/extended (movies and series). */
  extended?: Record<string, unknown>;
}

export interface TheTvdbFake extends FakeServer {
  baseUrl: string;
  key: string;
  addRecord(record: FakeTvdbRecord): void;
  /** Pins the hits (by tvdb_id, in order) of a search query (exact string). */
  pinSearch(query: string, ids: string[]): void;
  /** Every token issued so far is refused from now on (401). */
  expireTokens(): void;
  logins(): number;
  searches(): string[];
}

export const TVDB_KEY = 'tvdb-test-key';

export async function startTheTvdbFake(options: FakeServerOptions & { key?: string } = {}): Promise<TheTvdbFake> {
  const key = options.key ?? TVDB_KEY;
  const records: FakeTvdbRecord[] = [];
  const valid = new Set<string>();
  const pinned = new Map<string, string[]>();
  let issued = 0;

  const unauthorized: FakeReply = { status: 401, body: { status: 'failure', message: 'Unauthorized', data: null } };

  function authorized(header: string | string[] | undefined): boolean {
    const value = Array.isArray(header) ? header[0] : header;
    const m = /^Bearer (.+)$/.exec(value ?? '');
    return m !== null && valid.has(m[1]!);
  }

  function searchHit(r: FakeTvdbRecord) {
    return {
      objectID: `${r.type}-${r.tvdb_id}`,
      id: `${r.type}-${r.tvdb_id}`,
      tvdb_id: r.tvdb_id,
      type: r.type,
      primary_type: r.type,
      name: r.name,
      slug: r.slug,
      ...(r.year ? { year: r.year } : {}),
      translations: r.translations ?? { eng: r.name },
      aliases: r.aliases ?? [],
      image_url: `https://artworks.thetvdb.com/banners/${r.slug}.jpg`,
      thumbnail: `https://artworks.thetvdb.com/banners/${r.slug}_t.jpg`,
    };
  }

  const server = (await startFakeServer(
    anyPath((req) => {
      if (req.method === 'POST' && req.path === '/v4/login') {
        let body: { apikey?: unknown };
        try {
          body = JSON.parse(req.body) as { apikey?: unknown };
        } catch {
          return { status: 400, body: { status: 'failure', message: 'invalid JSON', data: null } };
        }
        if (body.apikey !== key) return unauthorized;
        const token = `eyJ.fake-token-${++issued}`;
        valid.add(token);
        return { body: { status: 'success', data: { token } } };
      }
      if (req.method !== 'GET') return notFound(req.path);
      if (!authorized(req.headers.authorization)) return unauthorized;
      if (req.path === '/v4/search') {
        const raw = req.query.get('query') ?? '';
        const q = raw.toLowerCase();
        const limit = Number(req.query.get('limit') ?? 50);
        const ids = pinned.get(raw);
        const hits = ids
          ? ids.map((id) => records.find((r) => r.tvdb_id === id)).filter((r): r is FakeTvdbRecord => r !== undefined)
          : records.filter((r) => {
              const n = r.name.toLowerCase();
              return q !== '' && (n.includes(q) || q.includes(n));
            });
        return {
          body: {
            status: 'success',
            data: hits.slice(0, limit).map(searchHit),
            links: {
              prev: null,
              self: `https://api4.thetvdb.com/v4/search?query=${encodeURIComponent(q)}&page=0`,
              next: null,
              total_items: hits.length,
              page_size: limit,
            },
          },
        };
      }
      const m = /^\/v4\/(movies|series)\/(\d+)\/extended$/.exec(req.path);
      if (m) {
        const type = m[1] === 'movies' ? 'movie' : 'series';
        const record = records.find((r) => r.tvdb_id === m[2] && r.type === type);
        if (!record?.extended)
          return { status: 404, body: { status: 'failure', message: 'NotFoundException', data: null } };
        return {
          body: { status: 'success', data: { id: Number(record.tvdb_id), slug: record.slug, ...record.extended } },
        };
      }
      return notFound(req.path);
    }),
    options,
  )) as TheTvdbFake;

  server.baseUrl = `${server.url}/v4`;
  server.key = key;
  server.addRecord = (record) => {
    records.push(record);
  };
  server.pinSearch = (query, ids) => {
    pinned.set(query, ids);
  };
  server.expireTokens = () => valid.clear();
  server.logins = () => server.requests.filter((r) => r.path === '/v4/login').length;
  server.searches = () => server.requests.filter((r) => r.path === '/v4/search').map((r) => r.query.get('query') ?? '');
  return server;
}
