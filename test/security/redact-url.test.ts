import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/runtime/logging.js';

/** Query strings kept (LOG_QUERIES=true): what is still redacted in them. */
const Q = { queries: true };

describe('request URLs in log lines', () => {
  it('keeps a URL whose query names no secret exactly as it came', () => {
    const url = '/api/v1/web/?q=hello+world&page=2&lang=en';
    expect(redactUrl(url, Q)).toBe(url);
    expect(redactUrl('/status/health', Q)).toBe('/status/health');
  });

  it('redacts the value of every secret-bearing parameter, whatever its case', () => {
    expect(redactUrl('/status/health?token=s3cret&x=1', Q)).toBe('/status/health?token=[redacted]&x=1');
    expect(redactUrl('/api/v1/web/?q=a&KEY=s3cret', Q)).toBe('/api/v1/web/?q=a&KEY=[redacted]');
    expect(redactUrl('/x?Api_Key=a&password=b&api-key=c&apikey=d', Q)).toBe(
      '/x?Api_Key=[redacted]&password=[redacted]&api-key=[redacted]&apikey=[redacted]',
    );
  });

  it('redacts a secret parameter whose name is percent-encoded', () => {
    expect(redactUrl('/status/health?t%6Fken=s3cret', Q)).toBe('/status/health?t%6Fken=[redacted]');
  });

  it('leaves a query that only mentions a secret word in a value untouched but for secret names', () => {
    expect(redactUrl('/api/v1/web/?q=monkey+keys&token=abc', Q)).toBe('/api/v1/web/?q=monkey+keys&token=[redacted]');
    expect(redactUrl('/api/v1/web/?q=monkey+keys', Q)).toBe('/api/v1/web/?q=monkey+keys');
  });

  it('keeps a query whose values hold percent-encoded characters as it came, and still redacts a secret beside them', () => {
    expect(redactUrl('/api/v1/instant/?q=7+*+7+%2B+3', Q)).toBe('/api/v1/instant/?q=7+*+7+%2B+3');
    expect(redactUrl('/api/v1/web/?q=caf%C3%A9&token=abc', Q)).toBe('/api/v1/web/?q=caf%C3%A9&token=[redacted]');
    expect(redactUrl('/x?a=1&&b=%25&api%5Fkey=z', Q)).toBe('/x?a=1&&b=%25&api%5Fkey=[redacted]');
    expect(redactUrl('/x?key', Q)).toBe('/x?key=[redacted]');
    expect(redactUrl('/x?', Q)).toBe('/x?');
  });

  it('gives the same URL as redacting every parameter one by one, for any query', async () => {
    const fc = (await import('fast-check')).default;
    const secret = new Set(['token', 'key', 'api_key', 'apikey', 'api-key', 'password']);
    // The reference: every parameter split off, its name decoded, a secret one's value replaced.
    const reference = (url: string): string => {
      const q = url.indexOf('?');
      if (q < 0) return url;
      const pairs = url
        .slice(q + 1)
        .split('&')
        .map((pair) => {
          const eq = pair.indexOf('=');
          const rawName = eq < 0 ? pair : pair.slice(0, eq);
          let name = rawName;
          try {
            name = decodeURIComponent(rawName.replace(/\+/g, ' '));
          } catch {}
          return secret.has(name.toLowerCase()) ? `${rawName}=[redacted]` : pair;
        });
      return `${url.slice(0, q)}?${pairs.join('&')}`;
    };
    const pieces = ['a', 'q', 'key', 'KEY', 'token', 'api', '_', '-', '%5F', '%6B', '%', '=', '&', '+', 'x', '1', '?'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 10 }), (parts) => {
        const url = `/p?${parts.join('')}`;
        expect(redactUrl(url, Q)).toBe(reference(url));
      }),
      { numRuns: 20_000 },
    );
  });

  it('drops the query string unless queries are logged (LOG_QUERIES)', () => {
    expect(redactUrl('/api/v1/web/?q=secret+medical+query&page=2')).toBe('/api/v1/web/');
    expect(redactUrl('/searxng/svc_sk_0a1b2c3d.x/search?q=secret')).toBe('/searxng/[redacted]/search');
    expect(redactUrl('/status/health')).toBe('/status/health');
  });
});

describe('a key-shaped token in a request URL', () => {
  const KEY = 'svc_sk_0a1b2c3d.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde';
  const SECRET = KEY.split('.')[1]!;
  const forms = [
    `http://sift.example/searxng/${KEY}/search?q=a`,
    `/%73earxng/${KEY}/search`,
    `/%2573earxng/${encodeURIComponent(KEY).replace(/_/g, '%5F')}/search`,
    `//searxng/${KEY}/search`,
    `/SEARXNG/${KEY}/search`,
    `/x/../searxng/${KEY}/search`,
    `/searxng/./${KEY}/search`,
    `/api/v1/${KEY}`,
    `/nowhere/%73vc%5Fsk%5F0a1b2c3d.${SECRET}`,
    `/searxng/${KEY.slice('svc_sk_'.length)}/search`,
  ];

  it('is redacted from the path whatever its spelling, at every setting of LOG_QUERIES', () => {
    for (const url of forms) {
      for (const logging of [{}, Q]) {
        const logged = redactUrl(url, logging);
        expect(logged, url).not.toContain(SECRET);
        expect(logged, url).toContain('[redacted]');
      }
    }
  });

  it('is redacted from a logged query string, decoded or not', () => {
    expect(redactUrl(`/api/v1/web/?q=${KEY}`, Q)).toBe('/api/v1/web/?q=[redacted]');
    expect(redactUrl(`/api/v1/web/?q=${encodeURIComponent(KEY).replace(/s/g, '%73')}`, Q)).not.toContain(SECRET);
  });

  it('leaves a path that holds no key as it came', () => {
    expect(redactUrl('/api/v1/web/')).toBe('/api/v1/web/');
    expect(redactUrl('/searxng/')).toBe('/searxng/');
    expect(redactUrl('/%41pi/v1/')).toBe('/%41pi/v1/');
  });
});
