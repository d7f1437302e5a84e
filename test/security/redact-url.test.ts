import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/logging.js';

describe('request URLs in log lines', () => {
  it('keeps a URL whose query names no secret exactly as it came', () => {
    const url = '/api/v1/web/?q=hello+world&page=2&lang=en';
    expect(redactUrl(url)).toBe(url);
    expect(redactUrl('/status/health')).toBe('/status/health');
  });

  it('redacts the value of every secret-bearing parameter, whatever its case', () => {
    expect(redactUrl('/status/health?token=s3cret&x=1')).toBe('/status/health?token=[redacted]&x=1');
    expect(redactUrl('/api/v1/web/?q=a&KEY=s3cret')).toBe('/api/v1/web/?q=a&KEY=[redacted]');
    expect(redactUrl('/x?Api_Key=a&password=b&api-key=c&apikey=d')).toBe(
      '/x?Api_Key=[redacted]&password=[redacted]&api-key=[redacted]&apikey=[redacted]',
    );
  });

  it('redacts a secret parameter whose name is percent-encoded', () => {
    expect(redactUrl('/status/health?t%6Fken=s3cret')).toBe('/status/health?t%6Fken=[redacted]');
  });

  it('leaves a query that only mentions a secret word in a value untouched but for secret names', () => {
    expect(redactUrl('/api/v1/web/?q=monkey+keys&token=abc')).toBe('/api/v1/web/?q=monkey+keys&token=[redacted]');
    expect(redactUrl('/api/v1/web/?q=monkey+keys')).toBe('/api/v1/web/?q=monkey+keys');
  });
});
