import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentsFailure, createPageFetcher, type PageFetcher } from '../../src/contents/fetch/index.js';
import { ARTICLE_HTML, BLOG_POST_HTML, SITE_PDF, SITE_TEXTS, type SiteFake, startSiteFake } from '../fakes/site.js';
import { stubLookup } from './connections.js';

const UA = 'Sift/0.1 (+https://github.com/sift-search/sift; bot)';
const MAX_BYTES = 64 * 1024;
/** Far longer than any answer of a loopback fake takes, even on a loaded machine. */
const TIMEOUT_MS = 15_000;
/** The time cap of the fetches of sites that never finish: these end at it however short it is. */
const SHORT_TIMEOUT_MS = 1000;

async function failureOf(promise: Promise<unknown>): Promise<ContentsFailure> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(ContentsFailure);
  return outcome as ContentsFailure;
}

let site: SiteFake;
let fetcher: PageFetcher;
let shortFetcher: PageFetcher;
const clock = { now: Date.parse('2026-12-07T10:00:00Z') };

beforeAll(async () => {
  site = await startSiteFake({ bigBytes: 2 * MAX_BYTES, bombBytes: 16 * 1024 * 1024 });
  fetcher = createPageFetcher({
    allowHosts: [`127.0.0.1:${site.port}`],
    maxBytes: MAX_BYTES,
    timeoutMs: TIMEOUT_MS,
    userAgent: UA,
    respectRobots: false,
    now: () => clock.now,
  });
  shortFetcher = createPageFetcher({
    allowHosts: [`127.0.0.1:${site.port}`],
    maxBytes: MAX_BYTES,
    timeoutMs: SHORT_TIMEOUT_MS,
    userAgent: UA,
    respectRobots: false,
  });
});
afterAll(async () => {
  await fetcher.close();
  await shortFetcher.close();
  await site.close();
});

describe('contents fetching: pages', () => {
  it('reads an HTML page with its URL, final URL, status, type and fetch time', async () => {
    const page = await fetcher.fetch(`${site.url}/article.html`);
    expect(page).toMatchObject({
      url: `${site.url}/article.html`,
      finalUrl: `${site.url}/article.html`,
      status: 200,
      kind: 'html',
      contentType: 'text/html',
      text: ARTICLE_HTML,
    });
    expect(page.bytes).toBeUndefined();
    expect(page.fetchedAt.toISOString()).toBe('2026-12-07T10:00:00.000Z');
  });

  it('reads a page labelled ISO-8859-1 as windows-1252, as browsers do: the euro sign and dashes included', async () => {
    const page = await fetcher.fetch(`${site.url}/blog/zwetschgendatschi.html`);
    expect(page.text).toBe(BLOG_POST_HTML);
    expect(page.text).toContain('keine 8 € – und schmeckt');
  });

  it('sends Sift user agent and asks for compressed bodies', async () => {
    await fetcher.fetch(`${site.url}/article.html`);
    const request = site.requestsFor('/article.html').at(-1)!;
    expect(request.headers['user-agent']).toBe(UA);
    expect(request.headers['accept-encoding']).toContain('gzip');
  });

  it('reads plain text as text', async () => {
    const page = await fetcher.fetch(`${site.url}/notes.txt`);
    expect(page.kind).toBe('text');
    expect(page.contentType).toBe('text/plain');
    expect(page.text).toBe('Timetable notes\n\nCouchettes from €49.\n');
  });

  it('reads XHTML as HTML, in the encoding of its XML declaration', async () => {
    const page = await fetcher.fetch(`${site.url}/article.xhtml`);
    expect(page.kind).toBe('html');
    expect(page.contentType).toBe('application/xhtml+xml');
    expect(page.text).toContain(SITE_TEXTS.windows1252);
  });

  it('returns a PDF as its bytes', async () => {
    const page = await fetcher.fetch(`${site.url}/doc.pdf`);
    expect(page.kind).toBe('pdf');
    expect(page.contentType).toBe('application/pdf');
    expect(page.text).toBeUndefined();
    expect(Buffer.from(page.bytes!).equals(SITE_PDF)).toBe(true);
  });

  it('sniffs the type of a body served without a Content-Type: a PDF and an HTML page', async () => {
    const pdf = await fetcher.fetch(`${site.url}/untyped/doc`);
    expect(pdf.kind).toBe('pdf');
    expect(Buffer.from(pdf.bytes!).equals(SITE_PDF)).toBe(true);
    const html = await fetcher.fetch(`${site.url}/untyped/page`);
    expect(html.kind).toBe('html');
    expect(html.contentType).toBe('text/html');
  });

  it('reads a PDF served as application/octet-stream, as a download often is', async () => {
    const page = await fetcher.fetch(`${site.url}/download/doc`);
    expect(page.kind).toBe('pdf');
    expect(page.contentType).toBe('application/pdf');
    expect(Buffer.from(page.bytes!).equals(SITE_PDF)).toBe(true);
  });

  it.each(['/image.png', '/untyped/image', '/data.json', '/download/archive'])(
    'refuses %s as unsupported_type',
    async (path) => {
      const failure = await failureOf(fetcher.fetch(`${site.url}${path}`));
      expect(failure.reason).toBe('unsupported_type');
    },
  );

  it.each([
    ['/missing', 404],
    ['/error', 500],
  ])('answers a final status other than 2xx (%s) as http_status with the status', async (path, status) => {
    const failure = await failureOf(fetcher.fetch(`${site.url}${path}`));
    expect(failure.reason).toBe('http_status');
    expect(failure.status).toBe(status);
  });

  it.each(['/gzip/article.html', '/br/article.html', '/deflate/article.html'])(
    'decodes a compressed body (%s)',
    async (path) => {
      const page = await fetcher.fetch(`${site.url}${path}`);
      expect(page.text).toBe(ARTICLE_HTML);
    },
  );
});

describe('contents fetching: bodies that cannot be decoded', () => {
  it('answers a body that is not the compression it claims as unreachable', async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/gzip/corrupt.html`));
    expect(failure.reason).toBe('unreachable');
    expect(failure.detail).toMatch(/could not be decoded/);
  });
});

describe('contents fetching: charsets', () => {
  it.each([
    ['the header', '/charset/windows-1252-header', SITE_TEXTS.windows1252],
    ['the header', '/charset/shift_jis-header', SITE_TEXTS.shiftJis],
    ['the header', '/charset/gb18030-header', SITE_TEXTS.gb18030],
    ['the header of a text/plain body', '/charset/euc-kr-text', SITE_TEXTS.eucKr],
    ['<meta charset>', '/charset/shift_jis-meta', SITE_TEXTS.shiftJis],
    ['<meta charset>', '/charset/iso-8859-2-meta', SITE_TEXTS.latin2],
    ['<meta http-equiv>', '/charset/gb18030-http-equiv', SITE_TEXTS.gb18030],
    ['a UTF-16 BOM', '/charset/utf-16le-bom', SITE_TEXTS.utf16],
    [
      'a UTF-8 BOM, over a header naming another charset',
      '/charset/utf-8-bom-under-latin1-header',
      SITE_TEXTS.shiftJis,
    ],
    ['nothing (valid UTF-8)', '/charset/undeclared-utf-8', SITE_TEXTS.shiftJis],
    ['nothing (not UTF-8: windows-1252)', '/charset/undeclared-windows-1252', SITE_TEXTS.windows1252],
  ])('decodes a page whose charset comes from %s (%s)', async (_how, path, text) => {
    const page = await fetcher.fetch(`${site.url}${path}`);
    expect(page.text).toContain(text);
    expect(page.text).not.toContain('\uFFFD');
  });
});

describe('contents fetching: redirects', () => {
  it('follows a chain of 5 redirects to the final URL', async () => {
    const page = await fetcher.fetch(`${site.url}/hops/5`);
    expect(page.url).toBe(`${site.url}/hops/5`);
    expect(page.finalUrl).toBe(`${site.url}/hops/0`);
    expect(page.text).toBe(ARTICLE_HTML);
  });

  it('refuses a 6th redirect as too_many_redirects, without following it', async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/hops/6`));
    expect(failure.reason).toBe('too_many_redirects');
    expect(site.requestsFor('/hops/0')).toHaveLength(1);
  });

  it('re-applies the URL rules to a redirect target', async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/redirect-to?to=${encodeURIComponent('ftp://x.test/')}`));
    expect(failure.reason).toBe('invalid_url');
  });
});

describe('contents fetching: size and time caps', () => {
  it.each([
    ['declared by Content-Length', '/big'],
    ['streamed without a length', '/big-chunked'],
    ['a gzip bomb', '/gzip-bomb'],
    ['a brotli bomb', '/br-bomb'],
  ])('refuses a body over the cap (%s) as too_large', async (_how, path) => {
    const failure = await failureOf(fetcher.fetch(`${site.url}${path}`));
    expect(failure.reason).toBe('too_large');
  });

  it('ends a site that trickles its body at the time cap, as timeout', async () => {
    const failure = await failureOf(shortFetcher.fetch(`${site.url}/trickle`));
    expect(failure.reason).toBe('timeout');
  });

  it('ends a site that never answers at the time cap, as timeout', async () => {
    const failure = await failureOf(shortFetcher.fetch(`${site.url}/hang`));
    expect(failure.reason).toBe('timeout');
  });

  it("ends a fetch when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const pending = fetcher.fetch(`${site.url}/hang`, { signal: controller.signal });
    controller.abort();
    const failure = await failureOf(pending);
    expect(failure.reason).toBe('timeout');
    expect(failure.detail).toMatch(/cancelled/);
  });
});

describe('contents fetching: unreachable sites', () => {
  it('answers a connection reset as unreachable', async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/reset`));
    expect(failure.reason).toBe('unreachable');
  });

  it('answers a refused connection as unreachable', async () => {
    const closed = await startSiteFake();
    const port = closed.port;
    await closed.close();
    const local = createPageFetcher({
      allowHosts: [`127.0.0.1:${port}`],
      maxBytes: MAX_BYTES,
      timeoutMs: TIMEOUT_MS,
      userAgent: UA,
      respectRobots: false,
    });
    try {
      const failure = await failureOf(local.fetch(`http://127.0.0.1:${port}/`));
      expect(failure.reason).toBe('unreachable');
    } finally {
      await local.close();
    }
  });

  it('answers a name that does not resolve as unreachable', async () => {
    const local = createPageFetcher({
      allowHosts: [],
      maxBytes: MAX_BYTES,
      timeoutMs: TIMEOUT_MS,
      userAgent: UA,
      respectRobots: false,
      lookup: stubLookup({}),
    });
    try {
      const failure = await failureOf(local.fetch('http://no-such-host.test/'));
      expect(failure.reason).toBe('unreachable');
      expect(failure.detail).toMatch(/does not resolve/);
    } finally {
      await local.close();
    }
  });
});
