import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/index.js';

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('page contents configuration', () => {
  it('gives the documented defaults', () => {
    const c = parseConfig({});
    expect(c.CONTENTS_ENABLED).toBe(true);
    expect(c.CONTENTS_ALLOW_HOSTS).toEqual([]);
    expect(c.CONTENTS_MAX_BYTES).toBe(5 * 1024 * 1024);
    expect(c.CONTENTS_TIMEOUT_SECONDS).toBe(10);
    expect(c.CONTENTS_USER_AGENT).toMatch(/^Sift\/\d+\.\d+ \(.*bot.*\)$/);
    expect(c.CONTENTS_RESPECT_ROBOTS).toBe(true);
    expect(c.CONTENTS_HOST_CONCURRENCY).toBe(2);
    expect(c.CONTENTS_CACHE_SECONDS).toBe(3600);
  });

  it('reads CONTENTS_ALLOW_HOSTS as addresses and CIDRs, each with an optional port', () => {
    const c = parseConfig({ CONTENTS_ALLOW_HOSTS: '10.0.0.0/8, 127.0.0.1:8089,[::1]:8080, fd00::/8' });
    expect(c.CONTENTS_ALLOW_HOSTS).toEqual(['10.0.0.0/8', '127.0.0.1:8089', '[::1]:8080', 'fd00::/8']);
  });

  it.each(['intranet.example', '10.0.0.0/33', '127.0.0.1:99999', '[::1', '::1:8080x', '[10.0.0.1]:80'])(
    'refuses CONTENTS_ALLOW_HOSTS=%s, naming the entry',
    (entry) => {
      const lines = problems({ CONTENTS_ALLOW_HOSTS: `10.0.0.0/8,${entry}` });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^CONTENTS_ALLOW_HOSTS: must be a comma list of addresses or CIDRs/);
      expect(lines[0]).toContain(`"${entry}"`);
    },
  );

  it('refuses a size cap, timeout or host concurrency out of range', () => {
    expect(problems({ CONTENTS_MAX_BYTES: '10' })[0]).toMatch(/^CONTENTS_MAX_BYTES:/);
    expect(problems({ CONTENTS_TIMEOUT_SECONDS: '0' })[0]).toMatch(/^CONTENTS_TIMEOUT_SECONDS:/);
    expect(problems({ CONTENTS_HOST_CONCURRENCY: '0' })[0]).toMatch(/^CONTENTS_HOST_CONCURRENCY:/);
  });
});
