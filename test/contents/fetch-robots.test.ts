import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContentsFailure, createPageFetcher, type PageFetcher } from '../../src/contents/fetch/index.js';
import { type SiteFake, startSiteFake } from '../fakes/site.js';

const UA = 'Sift/0.1 (+https://github.com/sift-search/sift; bot)';
const HOUR = 3_600_000;

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
let clock: { now: number };

function makeFetcher(respectRobots: boolean): PageFetcher {
  return createPageFetcher({
    allowHosts: [`127.0.0.1:${site.port}`],
    maxBytes: 1024 * 1024,
    timeoutMs: 15_000,
    userAgent: UA,
    respectRobots,
    now: () => clock.now,
  });
}

beforeEach(async () => {
  clock = { now: Date.parse('2026-12-07T10:00:00Z') };
  site = await startSiteFake();
  fetcher = makeFetcher(true);
});
afterEach(async () => {
  await fetcher.close();
  await site.close();
});

describe('contents fetching honours robots.txt', () => {
  it("refuses a path that Sift's group disallows, without requesting it", async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/members/secret.html`));
    expect(failure.reason).toBe('robots_disallowed');
    expect(site.requestsFor('/members/secret.html')).toEqual([]);
  });

  it("reads a path that Sift's group allows by a longer Allow rule", async () => {
    const page = await fetcher.fetch(`${site.url}/members/public.html`);
    expect(page.status).toBe(200);
  });

  it('refuses a path disallowed for everyone and repeated in Sift’s group', async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/private/page.html`));
    expect(failure.reason).toBe('robots_disallowed');
  });

  it("applies Sift's group only, not the * group, when the file names Sift", async () => {
    site.setRobots({ status: 200, body: 'User-agent: *\nDisallow: /\n\nUser-agent: sift\nDisallow: /private/\n' });
    const page = await fetcher.fetch(`${site.url}/article.html`);
    expect(page.status).toBe(200);
  });

  it('applies the * group when the file does not name Sift', async () => {
    site.setRobots({ status: 200, body: 'User-agent: OtherBot\nDisallow:\n\nUser-agent: *\nDisallow: /\n' });
    const failure = await failureOf(fetcher.fetch(`${site.url}/article.html`));
    expect(failure.reason).toBe('robots_disallowed');
  });

  it('checks a redirect target against robots.txt before requesting it', async () => {
    const failure = await failureOf(fetcher.fetch(`${site.url}/redirect-to?to=/members/secret.html`));
    expect(failure.reason).toBe('robots_disallowed');
    expect(site.requestsFor('/members/secret.html')).toEqual([]);
  });

  it('fetches robots.txt once per origin while it is cached, and again after an hour', async () => {
    await fetcher.fetch(`${site.url}/article.html`);
    await fetcher.fetch(`${site.url}/members/public.html`);
    await failureOf(fetcher.fetch(`${site.url}/private/page.html`));
    expect(site.requestsFor('/robots.txt')).toHaveLength(1);
    clock.now += HOUR - 1;
    await fetcher.fetch(`${site.url}/article.html`);
    expect(site.requestsFor('/robots.txt')).toHaveLength(1);
    clock.now += 2;
    site.setRobots({ status: 200, body: 'User-agent: *\nDisallow: /article.html\n' });
    const failure = await failureOf(fetcher.fetch(`${site.url}/article.html`));
    expect(failure.reason).toBe('robots_disallowed');
    expect(site.requestsFor('/robots.txt')).toHaveLength(2);
  });

  it('makes one robots.txt fetch for pages of one origin fetched at the same time', async () => {
    const pages = await Promise.all(
      ['/article.html', '/members/public.html', '/hops/1'].map((path) => fetcher.fetch(`${site.url}${path}`)),
    );
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
    expect(site.requestsFor('/robots.txt')).toHaveLength(1);
  });

  it("lets the other pages wait for a shared robots.txt fetch when one page's caller gives up", async () => {
    const quitter = new AbortController();
    const given = fetcher.fetch(`${site.url}/article.html`, { signal: quitter.signal });
    const kept = fetcher.fetch(`${site.url}/members/public.html`);
    quitter.abort();
    const failure = await failureOf(given);
    expect(failure.reason).toBe('timeout');
    expect((await kept).status).toBe(200);
    expect(site.requestsFor('/robots.txt')).toHaveLength(1);
  });

  it('allows everything when robots.txt answers 4xx', async () => {
    site.setRobots({ status: 404, body: 'not found' });
    const page = await fetcher.fetch(`${site.url}/private/page.html`);
    expect(page.status).toBe(200);
  });

  it('disallows everything when robots.txt answers 5xx (RFC 9309), and asks again after a few minutes', async () => {
    site.setRobots({ status: 503, body: 'busy' });
    const failure = await failureOf(fetcher.fetch(`${site.url}/article.html`));
    expect(failure.reason).toBe('robots_disallowed');
    expect(failure.detail).toMatch(/503/);
    expect(site.requestsFor('/article.html')).toEqual([]);
    site.setRobots({ status: 404 });
    clock.now += 5 * 60_000 + 1;
    const page = await fetcher.fetch(`${site.url}/article.html`);
    expect(page.status).toBe(200);
  });

  it('follows a redirect of robots.txt and applies the file it leads to', async () => {
    site.setRobots({ status: 301, location: '/moved/robots.txt' });
    const failure = await failureOf(fetcher.fetch(`${site.url}/article.html`));
    expect(failure.reason).toBe('robots_disallowed');
    expect(site.requestsFor('/moved/robots.txt')).toHaveLength(1);
    expect(site.requestsFor('/article.html')).toEqual([]);
  });

  it('skips robots.txt entirely when respecting it is turned off', async () => {
    await fetcher.close();
    fetcher = makeFetcher(false);
    const page = await fetcher.fetch(`${site.url}/members/secret.html`);
    expect(page.status).toBe(200);
    expect(site.requestsFor('/robots.txt')).toEqual([]);
  });
});
