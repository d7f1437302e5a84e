import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';

/*
 * A fake web site on 127.0.0.1 for page contents: saved-looking pages with their boilerplate, text
 * in non-UTF-8 charsets (declared by the header, a <meta>, a BOM, or not at all), a PDF, redirect
 * chains, robots.txt, bodies over a size cap (also compressed ones that inflate past it), a
 * trickling and a hanging answer, an image, JSON, a 404 and a 500. It counts the connections and
 * requests it receives, so tests can prove that a refused fetch reached nothing.
 *
 *   const site = await startSiteFake();
 *   fetcher.fetch(`${site.url}/article.html`)
 */

/** The texts the charset pages carry, as they must read once decoded. */
export const SITE_TEXTS = {
  windows1252: 'Café “déjà vu” — 49 € for a naïve façade',
  shiftJis: '夜行列車がアルプスに戻ってくる。チューリッヒ発リュブリャナ行き。',
  gb18030: '夜间列车重返阿尔卑斯山。苏黎世至卢布尔雅那的卧铺车。',
  eucKr: '야간열차가 알프스로 돌아온다. 취리히에서 류블랴나까지.',
  latin2: 'Zażółć gęślą jaźń: Příliš žluťoučký kůň',
  utf16: 'Ночные поезда возвращаются в Альпы',
} as const;

/** Sift's robots.txt group and everyone else's. */
export const SITE_ROBOTS = [
  'User-agent: *',
  'Disallow: /private/',
  '',
  'User-agent: Sift',
  'Disallow: /private/',
  'Disallow: /members/',
  'Allow: /members/public',
  '',
].join('\n');

const PAGES = new URL('./site-pages/', import.meta.url);
export const ARTICLE_HTML = readFileSync(new URL('article.html', PAGES), 'utf8');
/** A German blog post with a consent wall, sidebar and comments, served in ISO-8859-1 (read as windows-1252). */
export const BLOG_POST_HTML = readFileSync(new URL('blog-post.html', PAGES), 'utf8');

/** A one-page PDF showing `text` (PDF 1.4, Helvetica, byte offsets computed). */
export function tinyPdf(text: string): Buffer {
  const stream = `BT /F1 18 Tf 72 720 Td (${text.replace(/[()\\]/g, '\\$&')}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export const SITE_PDF = tinyPdf('Night trains return to the Alps');

/** A 1x1 transparent PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const page = (head: string, body: string) =>
  `<!DOCTYPE html>\n<html><head>${head}<title>Charset test</title></head><body><p>${body}</p></body></html>`;

export interface SiteRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface SiteFakeOptions {
  /** The port to listen on (default: any free one). */
  port?: number;
  /** Bytes of the pages served over a size cap (default 256 KiB). */
  bigBytes?: number;
  /** What the compressed "bombs" inflate to (default 16 MiB). */
  bombBytes?: number;
}

export interface SiteFake {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Every request received, newest last. */
  requests: SiteRequest[];
  /** TCP connections accepted. */
  connections: number;
  /** Answer robots.txt with this status and body (default 200 with SITE_ROBOTS), or redirect it to `location`. */
  setRobots(answer: RobotsAnswer): void;
  /** The requests for one path. */
  requestsFor(path: string): SiteRequest[];
  /** Closes every open connection (keep-alive ones included). */
  dropConnections(): void;
  close(): Promise<void>;
}

export interface RobotsAnswer {
  status: number;
  body?: string;
  location?: string;
}

type Reply = { status?: number; headers?: Record<string, string>; body?: string | Buffer };

export async function startSiteFake(options: SiteFakeOptions = {}): Promise<SiteFake> {
  const bigBytes = options.bigBytes ?? 256 * 1024;
  const bombBytes = options.bombBytes ?? 16 * 1024 * 1024;
  const bigPage = `<html><body><p>${'x'.repeat(bigBytes)}</p></body></html>`;
  // Made cheaply, before any request: the gzip bomb is one member of 1 MiB of spaces repeated
  // (a gzip stream of several members decodes to all of them), the brotli one at quality 1.
  const member = gzipSync(Buffer.alloc(1024 * 1024, 0x20), { level: 9 });
  const gzipBomb = Buffer.concat(Array.from({ length: Math.ceil(bombBytes / (1024 * 1024)) }, () => member));
  const brotliBomb = brotliCompressSync(Buffer.alloc(bombBytes, 0x20), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 1 },
  });
  let robots: RobotsAnswer = { status: 200, body: SITE_ROBOTS };
  const sockets = new Set<Socket>();
  const html = (body: string | Buffer, charset = 'utf-8'): Reply => ({
    headers: { 'content-type': charset ? `text/html; charset=${charset}` : 'text/html' },
    body,
  });

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, url: URL) => Reply | undefined> = {
    '/robots.txt': () => ({
      status: robots.status,
      headers: { 'content-type': 'text/plain', ...(robots.location ? { location: robots.location } : {}) },
      body: robots.body ?? '',
    }),
    '/moved/robots.txt': () => ({
      headers: { 'content-type': 'text/plain' },
      body: 'User-agent: *\nDisallow: /article.html\n',
    }),
    '/article.html': () => html(ARTICLE_HTML),
    '/blog/zwetschgendatschi.html': () => html(iconv.encode(BLOG_POST_HTML, 'windows-1252'), 'ISO-8859-1'),
    '/private/page.html': () => html(ARTICLE_HTML),
    '/members/secret.html': () => html(ARTICLE_HTML),
    '/members/public.html': () => html(ARTICLE_HTML),
    '/notes.txt': () => ({
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'Timetable notes\n\nCouchettes from €49.\n',
    }),
    '/article.xhtml': () => ({
      headers: { 'content-type': 'application/xhtml+xml' },
      body: iconv.encode(
        `<?xml version="1.0" encoding="windows-1252"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body><p>${SITE_TEXTS.windows1252}</p></body></html>`,
        'windows-1252',
      ),
    }),
    '/gzip/article.html': () => ({
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' },
      body: gzipSync(ARTICLE_HTML),
    }),
    '/br/article.html': () => ({
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'br' },
      body: brotliCompressSync(Buffer.from(ARTICLE_HTML)),
    }),
    '/gzip/corrupt.html': () => ({
      headers: { 'content-type': 'text/html', 'content-encoding': 'gzip' },
      body: 'this is not gzip at all',
    }),
    '/deflate/article.html': () => ({
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'deflate' },
      body: deflateSync(ARTICLE_HTML),
    }),
    '/charset/windows-1252-header': () =>
      html(iconv.encode(page('', SITE_TEXTS.windows1252), 'windows-1252'), 'windows-1252'),
    '/charset/shift_jis-meta': () =>
      html(iconv.encode(page('<meta charset="Shift_JIS">', SITE_TEXTS.shiftJis), 'Shift_JIS'), ''),
    '/charset/gb18030-http-equiv': () =>
      html(
        iconv.encode(
          page('<meta http-equiv="Content-Type" content="text/html; charset=gb18030">', SITE_TEXTS.gb18030),
          'gb18030',
        ),
        '',
      ),
    '/charset/gb18030-header': () => html(iconv.encode(page('', SITE_TEXTS.gb18030), 'gb18030'), 'GB18030'),
    '/charset/shift_jis-header': () => html(iconv.encode(page('', SITE_TEXTS.shiftJis), 'Shift_JIS'), 'shift_jis'),
    '/charset/iso-8859-2-meta': () =>
      html(iconv.encode(page('<meta charset="iso-8859-2">', SITE_TEXTS.latin2), 'iso-8859-2'), ''),
    '/charset/euc-kr-text': () => ({
      headers: { 'content-type': 'text/plain; charset=euc-kr' },
      body: iconv.encode(SITE_TEXTS.eucKr, 'euc-kr'),
    }),
    '/charset/utf-16le-bom': () =>
      html(Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(page('', SITE_TEXTS.utf16), 'utf-16le')]), ''),
    // A BOM outranks the header, as in browsers: the header's charset is a server default here.
    '/charset/utf-8-bom-under-latin1-header': () =>
      html(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page('', SITE_TEXTS.shiftJis))]), 'iso-8859-1'),
    '/charset/undeclared-windows-1252': () => html(iconv.encode(page('', SITE_TEXTS.windows1252), 'windows-1252'), ''),
    '/charset/undeclared-utf-8': () => html(page('', SITE_TEXTS.shiftJis), ''),
    '/doc.pdf': () => ({ headers: { 'content-type': 'application/pdf' }, body: SITE_PDF }),
    '/untyped/doc': () => ({ body: SITE_PDF }),
    '/download/doc': () => ({ headers: { 'content-type': 'application/octet-stream' }, body: SITE_PDF }),
    '/download/archive': () => ({
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00]),
    }),
    '/untyped/page': () => ({ body: ARTICLE_HTML }),
    '/untyped/image': () => ({ body: PNG }),
    '/image.png': () => ({ headers: { 'content-type': 'image/png' }, body: PNG }),
    '/data.json': () => ({ headers: { 'content-type': 'application/json' }, body: '{"a":1}' }),
    '/redirect-to': (_req, _res, url) => ({ status: 302, headers: { location: url.searchParams.get('to') ?? '/' } }),
    '/big': () => html(bigPage),
    '/big-chunked': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      void (async () => {
        for (let sent = 0; sent <= bigBytes && !res.destroyed; sent += 16 * 1024) {
          if (!res.write('x'.repeat(16 * 1024))) await new Promise((r) => res.once('drain', r));
        }
        res.end();
      })();
      return undefined;
    },
    '/gzip-bomb': () => ({
      headers: { 'content-type': 'text/html', 'content-encoding': 'gzip' },
      body: gzipBomb,
    }),
    '/br-bomb': () => ({
      headers: { 'content-type': 'text/html', 'content-encoding': 'br' },
      body: brotliBomb,
    }),
    '/trickle': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><body>');
      const timer = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(timer));
      return undefined;
    },
    '/hang': () => undefined,
    '/reset': (req) => {
      req.socket.destroy();
      return undefined;
    },
    '/error': () => ({ status: 500, ...html('<h1>Internal Server Error</h1>') }),
  };

  function route(
    path: string,
  ): ((req: IncomingMessage, res: ServerResponse, url: URL) => Reply | undefined) | undefined {
    const hops = /^\/hops\/(\d+)$/.exec(path);
    if (hops) {
      const n = Number(hops[1]);
      return () => (n === 0 ? html(ARTICLE_HTML) : { status: 302, headers: { location: `/hops/${n - 1}` } });
    }
    return routes[path];
  }

  const fake: SiteFake = {
    url: '',
    port: 0,
    requests: [],
    connections: 0,
    setRobots(answer) {
      robots = answer;
    },
    requestsFor(path) {
      return fake.requests.filter((r) => r.path === path);
    },
    dropConnections() {
      for (const s of sockets) s.destroy();
    },
    async close() {
      fake.dropConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site.test');
    fake.requests.push({ method: req.method ?? 'GET', path: url.pathname, headers: req.headers });
    const handler = route(url.pathname);
    const reply: Reply | undefined = handler ? handler(req, res, url) : { status: 404, ...html('<h1>Not Found</h1>') };
    if (!reply) return;
    const body = reply.body ?? '';
    res.writeHead(reply.status ?? 200, { 'content-length': String(Buffer.byteLength(body)), ...reply.headers });
    res.end(body);
  });
  server.on('connection', (s: Socket) => {
    fake.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  fake.port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${fake.port}`;
  return fake;
}
