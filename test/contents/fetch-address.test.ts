import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addressPolicy,
  ContentsFailure,
  createPageFetcher,
  type PageFetcher,
  parseContentsUrl,
} from '../../src/contents/fetch/index.js';
import { type SiteFake, startSiteFake } from '../fakes/site.js';
import { stubLookup, watchConnections } from './connections.js';

const UA = 'Sift/0.1 (+https://github.com/sift-search/sift; bot)';

/** The failure a fetch rejects with (the test fails when it resolves). */
async function failureOf(promise: Promise<unknown>): Promise<ContentsFailure> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(ContentsFailure);
  return outcome as ContentsFailure;
}

function reasonOfUrl(raw: string, allow: string[] = []): string {
  try {
    parseContentsUrl(raw, addressPolicy(allow));
    return 'ok';
  } catch (err) {
    return (err as ContentsFailure).reason;
  }
}

describe('contents URL rules', () => {
  it.each([
    ['ftp://example.com/file', 'not http(s)'],
    ['javascript:alert(1)', 'a script URL'],
    ['/relative/path', 'a relative URL'],
    ['example.com/page', 'no scheme'],
    ['https://user:secret@example.com/', 'credentials'],
    ['https://user@example.com/', 'a user name'],
    [`https://example.com/${'a'.repeat(2048)}`, 'over 2,048 characters'],
    ['', 'empty'],
  ])('refuses %s as invalid_url (%s)', (raw) => {
    expect(reasonOfUrl(raw)).toBe('invalid_url');
  });

  it.each([
    'http://127.0.0.1/',
    'http://127.1/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.0.0.1/',
    'http://0x7f000001/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://10.255.255.255/',
    'http://172.16.0.1/',
    'http://172.31.255.254/',
    'http://192.168.0.1/',
    'http://100.64.0.1/',
    'http://100.100.100.200/',
    'http://[fc00::1]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://240.0.0.1/',
    'http://192.0.2.1/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a00:1::]/',
    'http://[::]/',
    'http://[ff02::1]/',
  ])('refuses the literal address in %s as blocked_address', (raw) => {
    expect(reasonOfUrl(raw)).toBe('blocked_address');
  });

  it.each([
    'https://example.com/a?b=c',
    'http://93.184.215.14/',
    'http://[2606:4700:4700::1111]/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://[::ffff:8.8.8.8]/',
  ])('accepts %s', (raw) => {
    expect(reasonOfUrl(raw)).toBe('ok');
  });

  it('accepts a private address that CONTENTS_ALLOW_HOSTS names, on its port only when it gives one', () => {
    expect(reasonOfUrl('http://10.1.2.3/', ['10.0.0.0/8'])).toBe('ok');
    expect(reasonOfUrl('http://127.0.0.1:8089/', ['127.0.0.1:8089'])).toBe('ok');
    expect(reasonOfUrl('http://127.0.0.1:8090/', ['127.0.0.1:8089'])).toBe('blocked_address');
    expect(reasonOfUrl('http://[::1]:8080/', ['[::1]:8080'])).toBe('ok');
    expect(reasonOfUrl('http://[::1]:8081/', ['[::1]:8080'])).toBe('blocked_address');
    expect(reasonOfUrl('http://[fd00::5]/', ['fd00::/8'])).toBe('ok');
    expect(reasonOfUrl('http://192.168.1.1/', ['10.0.0.0/8'])).toBe('blocked_address');
  });

  it('refuses to build a policy from an entry that is no address or CIDR', () => {
    expect(() => addressPolicy(['intranet.example'])).toThrow(/intranet\.example/);
    expect(() => addressPolicy(['10.0.0.0/33'])).toThrow();
  });
});

describe('contents fetching refuses private addresses before connecting', () => {
  let site: SiteFake;
  let fetcher: PageFetcher;
  const lookup = stubLookup({
    'metadata.test': ['169.254.169.254'],
    'ten.test': ['10.0.0.7'],
    'sixteen.test': ['172.16.4.4'],
    'home.test': ['192.168.1.20'],
    'cgnat.test': ['100.64.1.1'],
    'loopback.test': ['127.0.0.1'],
    'loopback6.test': ['::1'],
    'zero.test': ['0.0.0.0'],
    'mapped.test': ['::ffff:10.0.0.1'],
    'ula.test': ['fd12:3456::1'],
    'linklocal6.test': ['fe80::1'],
    'nat64.test': ['64:ff9b::a9fe:a9fe'],
  });

  beforeAll(async () => {
    site = await startSiteFake();
    // The fake site's loopback port is not allowed: only another port is.
    fetcher = createPageFetcher({
      allowHosts: [`127.0.0.1:${site.port === 65535 ? 1 : site.port + 1}`],
      maxBytes: 1024 * 1024,
      timeoutMs: 15_000,
      userAgent: UA,
      respectRobots: true,
      lookup,
    });
  });
  afterAll(async () => {
    await fetcher.close();
    await site.close();
  });

  it.each([
    'http://127.0.0.1/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.0.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://192.168.0.1/',
    'http://100.64.0.1/',
    'http://[fc00::1]/',
    'http://[fe80::1]/',
  ])('refuses %s without a connection attempt', async (raw) => {
    const watch = watchConnections();
    const failure = await failureOf(fetcher.fetch(raw));
    watch.stop();
    expect(failure.reason).toBe('blocked_address');
    expect(watch.attempts).toEqual([]);
  });

  it.each([
    ['metadata.test', '169.254.169.254'],
    ['ten.test', '10.0.0.7'],
    ['sixteen.test', '172.16.4.4'],
    ['home.test', '192.168.1.20'],
    ['cgnat.test', '100.64.1.1'],
    ['loopback.test', '127.0.0.1'],
    ['loopback6.test', '::1'],
    ['zero.test', '0.0.0.0'],
    ['mapped.test', '::ffff:10.0.0.1'],
    ['ula.test', 'fd12:3456::1'],
    ['linklocal6.test', 'fe80::1'],
    ['nat64.test', '64:ff9b::a9fe:a9fe'],
  ])('refuses a name resolving to a private address (%s -> %s) at connect time, without connecting', async (name) => {
    const watch = watchConnections();
    const failure = await failureOf(fetcher.fetch(`http://${name}/page`));
    watch.stop();
    expect(failure.reason).toBe('blocked_address');
    expect(lookup.asked).toContain(name);
    expect(watch.attempts).toEqual([]);
  });

  it('refuses a loopback address that is not allowed although a server listens there: no request reaches it', async () => {
    const before = site.connections;
    const failure = await failureOf(fetcher.fetch(`${site.url}/article.html`));
    expect(failure.reason).toBe('blocked_address');
    expect(site.connections).toBe(before);
    expect(site.requests).toEqual([]);
  });

  it('refuses localhost, resolved by the system resolver, on a port where a server listens', async () => {
    const real = createPageFetcher({
      allowHosts: [],
      maxBytes: 1024,
      timeoutMs: 15_000,
      userAgent: UA,
      respectRobots: false,
    });
    try {
      const failure = await failureOf(real.fetch(`http://localhost:${site.port}/article.html`));
      expect(failure.reason).toBe('blocked_address');
      expect(site.connections).toBe(0);
    } finally {
      await real.close();
    }
  });
});

describe('contents fetching from an allowed host', () => {
  let site: SiteFake;
  let fetcher: PageFetcher;
  let answers: Record<string, string[]>;

  beforeAll(async () => {
    site = await startSiteFake();
    answers = { 'intranet.test': ['10.9.8.7'], 'docs.test': ['127.0.0.1'] };
    const resolve = stubLookup(answers);
    fetcher = createPageFetcher({
      allowHosts: [`127.0.0.1:${site.port}`],
      maxBytes: 1024 * 1024,
      timeoutMs: 15_000,
      userAgent: UA,
      respectRobots: false,
      lookup: resolve,
    });
  });
  afterAll(async () => {
    await fetcher.close();
    await site.close();
  });

  it('refuses a redirect from the allowed host to a private address: the target is never contacted', async () => {
    const watch = watchConnections();
    const failure = await failureOf(
      fetcher.fetch(`${site.url}/redirect-to?to=${encodeURIComponent('http://10.0.0.1/admin')}`),
    );
    watch.stop();
    expect(failure.reason).toBe('blocked_address');
    expect(watch.attempts.filter((a) => a.address !== '127.0.0.1')).toEqual([]);
  });

  it('refuses a redirect to a name that resolves to a private address, at connect time', async () => {
    const watch = watchConnections();
    const to = `http://intranet.test:${site.port}/article.html`;
    const failure = await failureOf(fetcher.fetch(`${site.url}/redirect-to?to=${encodeURIComponent(to)}`));
    watch.stop();
    expect(failure.reason).toBe('blocked_address');
    expect(watch.attempts.filter((a) => a.address !== '127.0.0.1')).toEqual([]);
  });

  it('refuses a redirect to the same loopback address on a port that is not allowed', async () => {
    const before = site.requests.length;
    const failure = await failureOf(
      fetcher.fetch(`${site.url}/redirect-to?to=${encodeURIComponent('http://127.0.0.1:9/')}`),
    );
    expect(failure.reason).toBe('blocked_address');
    expect(site.requests.length).toBe(before + 1);
  });

  it('checks the address of every new connection, so a name rebound to a private address is refused', async () => {
    const page = await fetcher.fetch(`http://docs.test:${site.port}/article.html`);
    expect(page.status).toBe(200);
    site.dropConnections();
    answers['docs.test'] = ['10.0.0.2'];
    const watch = watchConnections();
    const failure = await failureOf(fetcher.fetch(`http://docs.test:${site.port}/article.html`));
    watch.stop();
    expect(failure.reason).toBe('blocked_address');
    expect(watch.attempts).toEqual([]);
  });
});
