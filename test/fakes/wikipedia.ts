import { anyPath, notFound } from './any-path.js';
import { type FakeReply, type FakeServer, type FakeServerOptions, startFakeServer } from './fake-server.js';

/*
 * Fake Wikipedia (upstreams.md section 8), every language wiki on one server
 * under /{lang}/ (so WIKIPEDIA_BASE_URL = `${url}/{lang}`):
 * - /{lang}/w/api.php?action=query&list=search&srsearch=…&srlimit=…
 *   -> {"batchcomplete": "", "query": {"searchinfo": {...}, "search": [{ns, title, pageid, snippet, redirecttitle?}]}}
 *   (hits: the pinned list for the query, else pages whose title contains the
 *   query or is contained in it, case-insensitive); Action API errors come
 *   as HTTP 200 with {"error": {...}} (setApiError).
 * - /{lang}/api/rest_v1/page/summary/{Title_}: the page summary; a redirect
 *   page answers 302 with a relative Location (the target title), like the
 *   real REST API; an unknown title is a 404 problem JSON.
 */

export interface FakeWikiPage {
  title: string;
  description?: string;
  extract?: string;
  /** Default "standard". */
  type?: 'standard' | 'disambiguation' | 'no-extract' | 'mainpage';
  wikibase_item?: string;
  thumbnail?: string;
  /** { source, width }: the original image. */
  originalimage?: { source: string; width: number };
}

export interface WikipediaFake extends FakeServer {
  /** Adds (or replaces) a page on a wiki (default en). */
  addPage(page: FakeWikiPage, lang?: string): void;
  /** `from` redirects to `to` (on a wiki, default en). */
  addRedirect(from: string, to: string, lang?: string): void;
  /** Pins the search hits for a query (exact query string, on a wiki, default en). */
  setSearch(q: string, hits: { title: string; redirecttitle?: string }[], lang?: string): void;
  /** Every Action API call answers {"error": …} with HTTP 200 while on. */
  setApiError(on: boolean): void;
  /** Requests to the search API / the summary endpoint. */
  searches(): { lang: string; q: string }[];
  summaries(): { lang: string; title: string }[];
}

const underscore = (t: string) => t.replace(/ /g, '_');

export async function startWikipediaFake(options: FakeServerOptions = {}): Promise<WikipediaFake> {
  const pages = new Map<string, FakeWikiPage>();
  const redirects = new Map<string, string>();
  const pinned = new Map<string, { title: string; redirecttitle?: string }[]>();
  let apiError = false;
  const k = (lang: string, s: string) => `${lang}\n${s}`;

  function summary(lang: string, page: FakeWikiPage): FakeReply {
    const path = underscore(page.title);
    return {
      body: {
        type: page.type ?? 'standard',
        title: page.title,
        displaytitle: page.title,
        namespace: { id: 0, text: '' },
        ...(page.wikibase_item ? { wikibase_item: page.wikibase_item } : {}),
        titles: { canonical: path, normalized: page.title, display: page.title },
        pageid: 1000 + pages.size,
        lang,
        dir: 'ltr',
        timestamp: '2025-11-01T12:00:00Z',
        ...(page.description !== undefined ? { description: page.description } : {}),
        extract: page.extract ?? '',
        extract_html: `<p>${page.extract ?? ''}</p>`,
        ...(page.thumbnail ? { thumbnail: { source: page.thumbnail, width: 320, height: 240 } } : {}),
        ...(page.originalimage
          ? { originalimage: { source: page.originalimage.source, width: page.originalimage.width, height: 600 } }
          : {}),
        content_urls: {
          desktop: { page: `https://${lang}.wikipedia.org/wiki/${encodeURIComponent(path)}` },
          mobile: { page: `https://${lang}.m.wikipedia.org/wiki/${encodeURIComponent(path)}` },
        },
      },
    };
  }

  const server = (await startFakeServer(
    anyPath((req) => {
      const m = /^\/([a-z-]+)(\/.*)$/.exec(req.path);
      if (!m) return notFound(req.path);
      const lang = m[1]!;
      const rest = m[2]!;
      if (rest === '/w/api.php') {
        if (apiError) {
          return {
            body: { error: { code: 'internal_api_error', info: 'Something went wrong.' }, servedby: 'mw-fake' },
          };
        }
        if (req.query.get('action') !== 'query' || req.query.get('list') !== 'search') {
          return { body: { error: { code: 'badvalue', info: 'Unrecognized value for parameter "action".' } } };
        }
        const q = req.query.get('srsearch') ?? '';
        const limit = Number(req.query.get('srlimit') ?? 10);
        const needle = q.toLowerCase();
        const hits =
          pinned.get(k(lang, q)) ??
          [...pages.entries()]
            .filter(([key]) => key.startsWith(`${lang}\n`))
            .map(([, p]): { title: string; redirecttitle?: string } => ({ title: p.title }))
            .filter((p) => {
              const t = p.title.toLowerCase();
              return needle !== '' && (t.includes(needle) || needle.includes(t));
            });
        return {
          body: {
            batchcomplete: '',
            continue: { sroffset: limit, continue: '-||' },
            query: {
              searchinfo: { totalhits: hits.length },
              search: hits.slice(0, limit).map((h, i) => ({
                ns: 0,
                title: h.title,
                pageid: 5000 + i,
                snippet: `<span class="searchmatch">${h.title}</span> …`,
                ...(h.redirecttitle ? { redirecttitle: h.redirecttitle } : {}),
              })),
            },
          },
        };
      }
      const prefix = '/api/rest_v1/page/summary/';
      if (rest.startsWith(prefix)) {
        const title = decodeURIComponent(rest.slice(prefix.length)).replace(/_/g, ' ');
        const target = redirects.get(k(lang, title));
        if (target !== undefined) {
          return { status: 302, headers: { location: encodeURIComponent(underscore(target)) }, body: '' };
        }
        const page = pages.get(k(lang, title));
        if (!page) {
          return {
            status: 404,
            body: {
              type: 'https://mediawiki.org/wiki/HyperSwitch/errors/not_found',
              title: 'Not found.',
              method: 'get',
              detail: 'Page or revision not found.',
              uri: `/${lang}.wikipedia.org/v1/page/summary/${underscore(title)}`,
            },
          };
        }
        return summary(lang, page);
      }
      return notFound(req.path);
    }),
    options,
  )) as WikipediaFake;

  server.addPage = (page, lang = 'en') => {
    pages.set(k(lang, page.title), page);
  };
  server.addRedirect = (from, to, lang = 'en') => {
    redirects.set(k(lang, from), to);
  };
  server.setSearch = (q, hits, lang = 'en') => {
    pinned.set(k(lang, q), hits);
  };
  server.setApiError = (on) => {
    apiError = on;
  };
  server.searches = () =>
    server.requests
      .filter((r) => r.path.endsWith('/w/api.php'))
      .map((r) => ({ lang: r.path.split('/')[1]!, q: r.query.get('srsearch') ?? '' }));
  server.summaries = () =>
    server.requests
      .filter((r) => r.path.includes('/api/rest_v1/page/summary/'))
      .map((r) => ({
        lang: r.path.split('/')[1]!,
        title: decodeURIComponent(r.path.split('/api/rest_v1/page/summary/')[1]!),
      }));
  return server;
}
